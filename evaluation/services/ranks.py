"""Scores and filtered ranks of every judged entity of the evaluated questions, per system, cached in storage.

Every system is ranked the same way, whichever way it entered (``evaluation.services.scores``: a model, a kept
score matrix or kept run entries): one engine pass per (system, sample) ranks the *universe* of each question --
every entity labelled by any label set in use plus the question's test answers -- against the macro filter (train +
valid answers, SPEC 5.3). It keeps, per (question, entity): ``greater``, ``ties``, ``num_candidates`` and the
entity's own score (read from the same score tensor, at least float32). Every label set's ranks follow from these
without scoring again:

- macro rank (filter train + valid) = the stored rank; an entity scored -inf (not in a run) is not retrieved;
- micro rank (filter train + valid + test + the label set's positives, SPEC 5.2): the extra filtered entities
  X = (test answers + positives) - (train + valid answers) - {a} are all in the universe with their scores, so
  greater -= #{x in X: s_x > s_a}, ties -= #{x in X: s_x == s_a}, num_candidates -= |X|.

Questions are the sample's and the completion questions of the label sets (``pooling.selectors.questions``), so
the cache is keyed by question (side, relation, anchor), not by row: ``evaluation/ranks/sample-<id>/system-<id>.npz``
with the fingerprint of the score source (checkpoint or kept scores file: name, size, mtime). A later evaluation
scores only the (question, entity) pairs not cached yet, and nothing at all (no torch import) when every pair is
cached. Per question the cache also keeps whether the system scored it and its ranking's length (runs).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.services.errors import EvaluationError
from evaluation.services.scores import SystemScores, has_scores, system_scores
from pooling.engine.questions import Questions, Ragged, known_answers
from pooling.models import Sample, System
from pooling.storage import load_arrays, save_arrays, storage_path

__all__ = ["EvaluationError", "JudgedRanks", "can_evaluate", "judged_ranks", "macro_filter", "system_fingerprint",
           "union_universe"]

TiePolicy = str
ProgressFn = Callable[[str, int, int], None]
CACHE_VERSION = 2  # 1: keyed by question row, imported systems from virtual score rows


@dataclass(frozen=True)
class JudgedRanks:
    """Ranks of (question, entity) pairs of one system, seen from the rows of one list of questions.

    Pair arrays are sorted by pair key = question key * E + entity; ``row_keys`` gives each row's question key.
    """

    keys: np.ndarray  # int64 (n,)
    greater: np.ndarray  # int64
    ties: np.ndarray  # int64
    num_candidates: np.ndarray  # int64
    score: np.ndarray  # float64 (NaN already -inf; -inf = not scored / not retrieved)
    row_keys: np.ndarray  # int64 (Q,)
    num_retrieved: np.ndarray  # int64 (Q,): length of the run after the macro filter; -1 = everything ranked
    scored: np.ndarray  # bool (Q,): the system has scores for the question
    num_entities: int

    def lookup(self, rows: np.ndarray, entities: np.ndarray) -> np.ndarray:
        """Positions of the (question row, entity) pairs; KeyError if one is missing."""
        rows = np.asarray(rows, dtype=np.int64)
        wanted = self.row_keys[rows] * self.num_entities + np.asarray(entities, dtype=np.int64)
        if wanted.size == 0:
            return np.zeros(0, dtype=np.int64)
        if self.keys.size == 0:
            raise KeyError("no ranks cached")
        position = np.minimum(np.searchsorted(self.keys, wanted), self.keys.size - 1)
        if not np.all(self.keys[position] == wanted):
            raise KeyError("a (question, entity) pair has no rank")
        return position

    def ranks(self, position: np.ndarray, policy: TiePolicy = "realistic") -> np.ndarray:
        greater = self.greater[position].astype(np.float64)
        ties = self.ties[position].astype(np.float64)
        if policy == "realistic":
            return 1.0 + greater + ties / 2.0
        if policy == "optimistic":
            return 1.0 + greater
        if policy == "pessimistic":
            return 1.0 + greater + ties
        raise EvaluationError(f"unknown tie policy {policy!r}")

    def retrieved(self, position: np.ndarray) -> np.ndarray:
        return self.score[position] > -np.inf


@dataclass(frozen=True)
class _Cache:
    """The cache file's arrays: pairs by pair key, questions by question key (both sorted)."""

    keys: np.ndarray
    greater: np.ndarray
    ties: np.ndarray
    num_candidates: np.ndarray
    score: np.ndarray
    question_keys: np.ndarray
    num_retrieved: np.ndarray
    scored: np.ndarray

    @classmethod
    def empty(cls) -> "_Cache":
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z, np.zeros(0), z, z, np.zeros(0, dtype=bool))

    def merge(self, new: "_Cache") -> "_Cache":
        order = np.argsort(np.concatenate([self.keys, new.keys]), kind="stable")
        pairs = [np.concatenate([a, b])[order] for a, b in (
            (self.keys, new.keys), (self.greater, new.greater), (self.ties, new.ties),
            (self.num_candidates, new.num_candidates), (self.score, new.score))]
        keep = ~np.isin(self.question_keys, new.question_keys)
        question_keys = np.concatenate([self.question_keys[keep], new.question_keys])
        q_order = np.argsort(question_keys, kind="stable")
        questions = [np.concatenate([a[keep], b])[q_order] for a, b in (
            (self.question_keys, new.question_keys), (self.num_retrieved, new.num_retrieved),
            (self.scored, new.scored))]
        return _Cache(*pairs, *questions)

    def question_meta(self, row_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        position = np.minimum(np.searchsorted(self.question_keys, row_keys), max(self.question_keys.size - 1, 0))
        if self.question_keys.size == 0 or not np.all(self.question_keys[position] == row_keys):
            raise KeyError("a question has no coverage")
        return self.num_retrieved[position], self.scored[position]


def cache_file(system: System, sample: Sample) -> str:
    return f"evaluation/ranks/sample-{sample.pk}/system-{system.pk}.npz"


def system_fingerprint(system: System, sample: Sample) -> str:
    """What the cached ranks depend on: the checkpoint (trained) or the kept scores file (imported)."""
    return system_scores(system, sample).fingerprint


def can_evaluate(system: System, sample: Sample) -> bool:
    return has_scores(system, sample)


def macro_filter(kg_arrays: dict[str, np.ndarray], questions: Questions) -> Ragged:
    """Train + valid answers of each question (SPEC 5.3)."""
    return known_answers(questions, kg_arrays["train"], kg_arrays["valid"])


def _load_cache(relative: str, fingerprint: str, num_entities: int) -> _Cache | None:
    if not storage_path(relative).exists():
        return None
    try:
        data = load_arrays(relative)
        if int(data.get("version", 1)) != CACHE_VERSION or str(data["fingerprint"]) != fingerprint \
                or int(data["num_entities"]) != num_entities:
            return None
        return _Cache(data["keys"], data["greater"], data["ties"], data["num_candidates"], data["score"],
                      data["question_keys"], data["num_retrieved"], data["scored"].astype(bool))
    except (OSError, ValueError, KeyError):
        return None


class _ScoreRecorder:
    """Wraps a ScoreFn: records the scores of each question's targets from the very tensor the engine ranks."""

    def __init__(self, score_fn: Callable, questions: Questions, targets: Ragged, num_entities: int, num_relations: int):
        self.score_fn = score_fn
        self.targets = targets
        self.num_entities, self.num_relations = num_entities, num_relations
        keys = questions.keys(num_entities, num_relations)
        self.order = np.argsort(keys)
        self.sorted_keys = keys[self.order]
        self.scores = np.full(targets.nnz, np.nan)

    def __call__(self, anchor: Any, relation: Any, side: int) -> Any:
        import torch

        out = self.score_fn(anchor, relation, side)
        anchor_np = anchor.detach().cpu().numpy().astype(np.int64)
        relation_np = relation.detach().cpu().numpy().astype(np.int64)
        wanted = (np.int64(side) * self.num_relations + relation_np) * self.num_entities + anchor_np
        rows = self.order[np.searchsorted(self.sorted_keys, wanted)]
        starts, stops = self.targets.offsets[rows], self.targets.offsets[rows + 1]
        lengths = stops - starts
        local = np.repeat(np.arange(rows.size), lengths)
        positions = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) if rows.size else np.zeros(0, int)
        positions = positions.astype(np.int64)
        values = out
        if not values.is_floating_point() or values.element_size() < 4:
            values = values.to(torch.float32)
        gathered = values[torch.from_numpy(local).to(out.device), torch.from_numpy(self.targets.values[positions]).to(out.device)]
        self.scores[positions] = gathered.detach().cpu().double().numpy()
        return out


def _score_pairs(source: SystemScores, questions: Questions, tv_filter: Ragged, targets: Ragged, row_keys: np.ndarray,
                 *, device: str | None, batch_size: int, progress: ProgressFn | None) -> _Cache:
    """One engine pass over the rows of ``targets`` that have any (rows aligned with ``questions``)."""
    from pooling.engine.ranking import rank  # torch

    num_entities = source.num_entities
    rows_with = np.flatnonzero(targets.lengths > 0)
    sub_questions, sub_filter, sub_targets = questions.take(rows_with), tv_filter.take(rows_with), targets.take(rows_with)
    resolved = source.device(device)
    recorder = _ScoreRecorder(source.score_fn(device), sub_questions, sub_targets, num_entities, source.num_relations)
    name = f"score {source.system.name}"
    result = rank(recorder, sub_questions, num_entities=num_entities, filter=sub_filter, targets=sub_targets, k=1,
                  batch_size=batch_size, device=resolved,
                  progress=(lambda d, t: progress(name, d, t)) if progress else None)
    scored, num_retrieved = source.coverage(sub_questions, sub_filter)
    keys = row_keys[rows_with][sub_targets.row_ids()] * num_entities + sub_targets.values
    scores = np.where(np.isnan(recorder.scores), -np.inf, recorder.scores)
    order = np.argsort(keys, kind="stable")
    q_keys = row_keys[rows_with]
    q_order = np.argsort(q_keys, kind="stable")
    return _Cache(keys[order], result.greater[order].astype(np.int64), result.ties[order].astype(np.int64),
                  result.num_candidates[order].astype(np.int64), scores[order], q_keys[q_order],
                  num_retrieved[q_order].astype(np.int64), scored[q_order].astype(bool))


def judged_ranks(
    system: System,
    sample: Sample,
    questions: Questions,
    universe: Ragged,
    filter_sets: Ragged,
    *,
    device: str | None = None,
    batch_size: int = 512,
    progress: ProgressFn | None = None,
    stats: dict | None = None,
) -> JudgedRanks:
    """Ranks/scores of every (question, entity) of ``universe`` for ``system``, from the cache where possible.

    ``filter_sets`` is the macro filter of ``questions``. ``stats`` (if given) receives ``computed`` and
    ``cached``: the number of pairs scored now / reused.
    """
    source = system_scores(system, sample)
    num_entities, num_relations = source.num_entities, source.num_relations
    if 2 * num_relations * num_entities * float(num_entities) >= 2.0 ** 63:
        raise EvaluationError(f"{sample.kg.name} is too large for the rank cache's int64 keys")
    row_keys = questions.keys(num_entities, num_relations)
    relative = cache_file(system, sample)
    cache = _load_cache(relative, source.fingerprint, num_entities) or _Cache.empty()
    wanted_keys = row_keys[universe.row_ids()] * num_entities + universe.values
    have = np.isin(wanted_keys, cache.keys)
    if stats is not None:
        stats["computed"] = stats.get("computed", 0) + int((~have).sum())
        stats["cached"] = stats.get("cached", 0) + int(have.sum())
    if not have.all():
        missing = Ragged.from_pairs(universe.row_ids()[~have], universe.values[~have], len(questions))
        new = _score_pairs(source, questions, filter_sets, missing, row_keys, device=device, batch_size=batch_size,
                           progress=progress)
        cache = cache.merge(new)
        save_arrays(relative, keys=cache.keys, greater=cache.greater, ties=cache.ties,
                    num_candidates=cache.num_candidates, score=cache.score, question_keys=cache.question_keys,
                    num_retrieved=cache.num_retrieved, scored=cache.scored, num_entities=np.int64(num_entities),
                    fingerprint=np.array(source.fingerprint), version=np.int64(CACHE_VERSION))
    try:
        num_retrieved, scored = cache.question_meta(row_keys)
    except KeyError:  # a question without any pair to rank (none in the universe): nothing of it is evaluated
        num_retrieved = np.full(len(questions), -1, dtype=np.int64)
        scored = np.ones(len(questions), dtype=bool)
        known = np.isin(row_keys, cache.question_keys)
        if known.any():
            num_retrieved[known], scored[known] = cache.question_meta(row_keys[known])
    return JudgedRanks(cache.keys, cache.greater, cache.ties, cache.num_candidates, cache.score, row_keys,
                       num_retrieved, scored, num_entities)


def union_universe(questions: Questions, test_triples: np.ndarray, *label_triples: np.ndarray) -> Ragged:
    """Per question: its test answers and every entity labelled in any of ``label_triples``."""
    return known_answers(questions, test_triples, *label_triples)
