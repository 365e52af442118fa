"""Reads: the questions of a label set -- the sample's questions plus the other side of every positive triple.

SPEC 5.2 ranks *both sides of every labelled triple*. A sampled triple's two questions are sample questions, but
a positive pool triple answers a sampled question on one side only; its other side asks a question the sample did
not ask (the pool was built from one side). :func:`label_questions` lists the sample's questions (rows
``0..num_sampled-1`` in ``Question.position`` order, with their qids) followed by these *completion questions*,
numbered on after the sample's qids (``head<N>`` / ``tail<N>``, per side in (relation key, anchor key) order).

The questions export of a campaign (``annotation.selectors.labels.completed_questions``) and the evaluation
(``evaluation.services.inputs``) both take their questions and qids from here, so an exported questions file,
the qrels and the evaluation report name the same questions. Torch-free.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pooling.engine.questions import HEAD, TAIL, Questions, as_triples
from pooling.models import Sample
from pooling.selectors.kg import kg_relation_keys
from pooling.selectors.pools import entity_keys_of_indices, sample_questions


@dataclass(frozen=True)
class AskedQuestions:
    """The sample's questions (first ``num_sampled`` rows, ``Question.position`` order) and the questions beyond
    the sample after them: the completion questions of a label set, or those a questions file names on import."""

    questions: Questions
    qids: list[str]
    num_sampled: int

    def __len__(self) -> int:
        return len(self.qids)

    def row_of(self) -> dict[str, int]:
        return {qid: row for row, qid in enumerate(self.qids)}


def next_qid_numbers(qids: list[str]) -> dict[int, int]:
    """Per side, the first free number after the ``head<N>`` / ``tail<N>`` qids given."""
    counters = {HEAD: 0, TAIL: 0}
    for qid in qids:
        for side, prefix in ((HEAD, "head"), (TAIL, "tail")):
            number = qid[len(prefix):] if qid.startswith(prefix) else ""
            if number.isdigit():
                counters[side] = max(counters[side], int(number) + 1)
    return counters


def completion_questions(asked: Questions, asked_qids: list[str], positive_triples: np.ndarray,
                         entity_keys_: Mapping[int, str], relation_keys: list[str], num_entities: int) -> AskedQuestions:
    """``asked`` (with its qids) followed by the questions of ``positive_triples`` it does not contain.

    Both sides of every positive triple are considered; new questions are numbered on after ``asked_qids`` per
    side, ordered by (relation key, anchor key) -- the order the questions export has always used.
    ``entity_keys_`` maps (at least) the entities of ``positive_triples`` to their keys.
    """
    triples = as_triples(positive_triples)
    num_entities = max(num_entities, 1)
    num_relations = max(len(relation_keys), 1)
    side = np.concatenate([np.full(len(triples), HEAD), np.full(len(triples), TAIL)]).astype(np.int64)
    relation = np.concatenate([triples[:, 1], triples[:, 1]])
    anchor = np.concatenate([triples[:, 2], triples[:, 0]])  # HEAD asks (?, r, t): anchored on t
    keys = (side * num_relations + relation) * num_entities + anchor
    asked_keys = asked.keys(num_entities, num_relations)
    keys, first = np.unique(keys, return_index=True)
    new = ~np.isin(keys, asked_keys)
    side, relation, anchor = side[first][new], relation[first][new], anchor[first][new]
    if side.size:
        relation_names = np.asarray(relation_keys, dtype=object)
        order = sorted(range(side.size), key=lambda i: (side[i], relation_names[relation[i]], entity_keys_[int(anchor[i])]))
        side, relation, anchor = side[order], relation[order], anchor[order]
    counters = next_qid_numbers(asked_qids)
    qids = list(asked_qids)
    for s in side.tolist():
        qids.append(f"{'head' if s == HEAD else 'tail'}{counters[s]}")
        counters[s] += 1
    questions = Questions(np.concatenate([asked.anchor, anchor]), np.concatenate([asked.relation, relation]),
                          np.concatenate([asked.side.astype(np.int64), side]))
    return AskedQuestions(questions, qids, len(asked))


def label_questions(sample: Sample, positive_triples: np.ndarray) -> AskedQuestions:
    """The sample's questions and the completion questions of ``positive_triples`` (index triples of its KG)."""
    sq = sample_questions(sample)
    kg = sample.kg
    positive_triples = as_triples(positive_triples)
    keys = entity_keys_of_indices(kg, np.concatenate([positive_triples[:, 0], positive_triples[:, 2]]).tolist())
    return completion_questions(sq.questions, sq.qids, positive_triples, keys, kg_relation_keys(kg), kg.num_entities)
