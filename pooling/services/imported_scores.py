"""Writes: the scores of an imported system, kept as given so that evaluation ranks from them like a trained model.

A ranking (top-k + the sample answers' ranks, filter train + valid + test) serves pooling, but it cannot serve
evaluation: macro metrics filter train + valid only (SPEC 5.3), the completed labels judge entities below any
depth, and the completed micro metrics rank questions the sample does not ask (the other side of a positive pool
triple, ``pooling.selectors.questions``). So ``import_scores`` and ``import_run`` also keep what they were given,
in one file per (system, sample) referenced by ``Ranking.scores_file``:

- ``kind`` ``"matrix"``: ``scores`` (n, E), float32 (float64 when given float64: never rounded), one row per
  question in ``side`` / ``relation`` / ``anchor``;
- ``kind`` ``"run"``: the run's entries of each question in CSR form (``offsets`` (n + 1,), ``entities``,
  ``scores`` float64 as read from the text); an entity not in the run was not retrieved.

Rows are the sample's questions first (``Question.position`` order), then the questions beyond the sample that a
questions file named (``qid<TAB>entity<TAB>relation``, the format of the campaign's ``questions`` export, which
numbers those questions on after the sample's). Torch-free.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pooling.engine import userfiles
from pooling.engine.questions import HEAD, TAIL, Questions
from pooling.models import Sample
from pooling.selectors.kg import kg_relation_keys
from pooling.selectors.pools import SampleQuestions, entity_keys
from pooling.selectors.questions import AskedQuestions


def sample_only(sq: SampleQuestions) -> AskedQuestions:
    return AskedQuestions(sq.questions, list(sq.qids), len(sq))


def read_questions_file(path: Path, sample: Sample, sq: SampleQuestions, error: type[Exception]
                        ) -> tuple[AskedQuestions, np.ndarray]:
    """The questions a file names, one per line: ``qid`` alone (a question of the sample) or
    ``qid<TAB>entity<TAB>relation`` (the ``questions`` export: ``head<N>`` asks (?, relation, entity), ``tail<N>``
    (entity, relation, ?)); a qid outside the sample then defines an extra question. Returns the questions and the
    row of each line. Unknown, repeated or inconsistent lines are refused with file:line."""
    try:
        text = userfiles.read_text(path)  # a regular file, bounded lines (FIFOs and devices refused)
    except userfiles.UserFileError as exc:
        raise error(str(exc)) from None
    kg = sample.kg
    sample_row = {qid: row for row, qid in enumerate(sq.qids)}
    num_entities, num_relations = max(kg.num_entities, 1), max(kg.num_relations, 1)
    sample_keys = {int(key): row for row, key in enumerate(sq.questions.keys(num_entities, num_relations))}
    entity_index = relation_index = None
    extra: list[tuple[int, int, int]] = []  # (side, relation, anchor)
    extra_qids: list[str] = []
    extra_row: dict[int, int] = {}  # question key -> row
    first_line: dict[str, int] = {}
    rows: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = [field.strip() for field in (line.split("\t") if "\t" in line else line.split())]
        if not fields or not fields[0]:
            raise error(f"{path}:{number}: empty line (expected one qid per line)")
        qid = fields[0]
        if qid in first_line:
            raise error(f"{path}:{number}: qid {qid!r} repeats line {first_line[qid]}")
        first_line[qid] = number
        if len(fields) == 1:
            if qid not in sample_row:
                raise error(f"{path}:{number}: qid {qid!r} is not a question of sample {sample.name} (its qids are "
                            "head0.., tail0..; a question beyond the sample needs `qid<TAB>entity<TAB>relation`, "
                            "the format of the campaign's questions export)")
            rows.append(sample_row[qid])
            continue
        if len(fields) != 3:
            raise error(f"{path}:{number}: expected `qid` or `qid<TAB>entity<TAB>relation`, got {len(fields)} fields")
        if entity_index is None:
            entity_index = {key: index for index, key in enumerate(entity_keys(kg))}
            relation_index = {key: index for index, key in enumerate(kg_relation_keys(kg))}
        side = HEAD if qid.startswith("head") else TAIL if qid.startswith("tail") else None
        if side is None:
            raise error(f"{path}:{number}: qid {qid!r} must start with head or tail (head<N> asks (?, r, entity))")
        if fields[1] not in entity_index:
            raise error(f"{path}:{number}: entity {fields[1]!r} is not an entity of {kg.name}")
        if fields[2] not in relation_index:
            raise error(f"{path}:{number}: relation {fields[2]!r} is not a relation of {kg.name}")
        anchor, relation = entity_index[fields[1]], relation_index[fields[2]]
        key = (side * num_relations + relation) * num_entities + anchor
        if qid in sample_row:
            if sample_keys.get(key) != sample_row[qid]:
                raise error(f"{path}:{number}: {qid} is a question of sample {sample.name} but asks another "
                            f"question there; the file does not number the sample's questions like kgpool")
            rows.append(sample_row[qid])
        elif key in sample_keys:
            raise error(f"{path}:{number}: {qid} asks the sample's question {sq.qids[sample_keys[key]]}")
        elif key in extra_row:
            raise error(f"{path}:{number}: {qid} asks the same question as {extra_qids[extra_row[key] - len(sq)]}")
        else:
            extra_row[key] = len(sq) + len(extra)
            extra.append((side, relation, anchor))
            extra_qids.append(qid)
            rows.append(extra_row[key])
    array = np.array(extra, dtype=np.int64).reshape(-1, 3)
    questions = Questions(np.concatenate([sq.questions.anchor, array[:, 2]]),
                          np.concatenate([sq.questions.relation, array[:, 1]]),
                          np.concatenate([sq.questions.side.astype(np.int64), array[:, 0]]))
    return AskedQuestions(questions, list(sq.qids) + extra_qids, len(sq)), np.array(rows, dtype=np.int64)


def scores_file_name(sample_pk: int, system_pk: int, system_name: str) -> str:
    return f"scores/{sample_pk}/{system_pk}-{system_name}.npz"


def matrix_arrays(questions: AskedQuestions, matrix: np.ndarray) -> dict[str, np.ndarray]:
    """The stored form of a score matrix whose rows follow ``questions``."""
    dtype = np.float64 if matrix.dtype.itemsize > 4 else np.float32
    return {"kind": np.array("matrix"), "side": questions.questions.side.astype(np.int64),
            "relation": questions.questions.relation, "anchor": questions.questions.anchor,
            "scores": np.ascontiguousarray(matrix, dtype=dtype)}


def run_arrays(questions: AskedQuestions, rows: np.ndarray, entities: np.ndarray, scores: np.ndarray
               ) -> dict[str, np.ndarray]:
    """The stored form of run entries (row of ``questions``, entity, score); questions without entries are left
    out (the run does not answer them)."""
    order = np.lexsort((entities, rows))
    rows, entities, scores = rows[order], entities[order], np.asarray(scores, dtype=np.float64)[order]
    present = np.unique(rows)
    local = np.searchsorted(present, rows)
    offsets = np.zeros(present.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(local, minlength=present.size), out=offsets[1:])
    q = questions.questions
    return {"kind": np.array("run"), "side": q.side[present].astype(np.int64), "relation": q.relation[present],
            "anchor": q.anchor[present], "offsets": offsets, "entities": entities.astype(np.int64), "scores": scores}
