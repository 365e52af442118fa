"""Scores and filtered ranks of every judged entity of a sample's questions, per system, cached in storage.

One engine pass per (system, sample) ranks the *universe* of each question: every entity labelled by any label
set in use plus the question's test answers, against the macro filter (train + valid answers, SPEC 5.3). It keeps,
per (question, entity): ``greater``, ``ties``, ``num_candidates`` and the entity's own score (read from the same
score tensor, at least float32). Every label set's ranks follow from these without scoring again:

- macro rank (filter train + valid) = the stored rank;
- micro rank (filter train + valid + test + the label set's positives, SPEC 5.2): the extra filtered entities
  X = (test answers + positives) - (train + valid answers) - {a} are all in the universe with their scores, so
  greater -= #{x in X: s_x > s_a}, ties -= #{x in X: s_x == s_a}, num_candidates -= |X|.

Cache: ``evaluation/ranks/sample-<id>/system-<id>.npz`` with a fingerprint of the model (checkpoint file, size,
mtime) or imported ranking file. A later evaluation scores only the (question, entity) pairs not cached yet, and
nothing at all (no torch import) when every pair is cached.

Imported systems (TREC runs: filtered top-k plus the ranks of the sample's answers) have no scores outside their
top-k. Their *virtual score row* holds the stored top-k scores, each retrieved sample answer placed where its rank
says (equal to the tied top-k score, or half-way between its neighbours), and -inf for everything else. So an
entity outside the run is *not retrieved*: for macro metrics its rank is infinite (num_ret = the run's length, as
trec_eval); for micro metrics and PROBE it ranks below every retrieved candidate, tied with all other unretrieved
ones (the realistic tie rank; the same convention as the run import). Test answers outside the sample are not in
a run, so they are unretrieved there as well.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pooling.engine.questions import Questions, Ragged, known_answers
from pooling.models import Ranking, Sample, System
from pooling.storage import load_arrays, save_arrays, storage_path

TiePolicy = str
ProgressFn = Callable[[str, int, int], None]


class EvaluationError(Exception):
    """An evaluation could not run (no ranking for an imported system, bad options...)."""


@dataclass(frozen=True)
class JudgedRanks:
    """Per (question, entity) of the universe, sorted by key = question row * E + entity."""

    keys: np.ndarray  # int64 (n,)
    greater: np.ndarray  # int64
    ties: np.ndarray  # int64
    num_candidates: np.ndarray  # int64
    score: np.ndarray  # float64 (NaN already -inf)
    num_retrieved: np.ndarray  # int64 (Q,): run length per question; -1 = everything ranked (trained)
    num_entities: int

    def lookup(self, rows: np.ndarray, entities: np.ndarray) -> np.ndarray:
        """Positions of the (question row, entity) pairs; KeyError if one is missing."""
        wanted = np.asarray(rows, dtype=np.int64) * self.num_entities + np.asarray(entities, dtype=np.int64)
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


def cache_file(system: System, sample: Sample) -> str:
    return f"evaluation/ranks/sample-{sample.pk}/system-{system.pk}.npz"


def system_fingerprint(system: System, sample: Sample) -> str:
    """What the cached scores depend on: the checkpoint (trained) or the stored ranking (imported)."""
    if system.origin == System.Origin.TRAINED and system.checkpoint_file:
        relative = system.checkpoint_file
        kind = "trained"
    else:
        ranking = Ranking.objects.filter(system=system, sample=sample).first()
        if ranking is None:
            raise EvaluationError(f"system {system.name!r} has no checkpoint and no ranking on sample {sample.name!r}")
        relative = ranking.ranking_file
        kind = "imported"
    path = storage_path(relative)
    try:
        stat = path.stat()
    except OSError:
        raise EvaluationError(f"system {system.name!r}: file {relative} is missing") from None
    return f"{kind}:{relative}:{stat.st_size}:{stat.st_mtime_ns}"


def can_evaluate(system: System, sample: Sample) -> bool:
    if system.kg_id != sample.kg_id or system.status != System.Status.READY:
        return False
    if system.origin == System.Origin.TRAINED and system.checkpoint_file:
        return True
    return Ranking.objects.filter(system=system, sample=sample).exists()


def macro_filter(kg_arrays: dict[str, np.ndarray], questions: Questions) -> Ragged:
    """Train + valid answers of each question (SPEC 5.3)."""
    return known_answers(questions, kg_arrays["train"], kg_arrays["valid"])


def _empty(num_questions: int, num_entities: int) -> JudgedRanks:
    z = np.zeros(0, dtype=np.int64)
    return JudgedRanks(z, z, z, z, np.zeros(0), np.full(num_questions, -1, dtype=np.int64), num_entities)


def _load_cache(relative: str, fingerprint: str, num_questions: int, num_entities: int) -> JudgedRanks | None:
    if not storage_path(relative).exists():
        return None
    try:
        data = load_arrays(relative)
    except (OSError, ValueError, KeyError):
        return None
    if str(data["fingerprint"]) != fingerprint or len(data["num_retrieved"]) != num_questions \
            or int(data["num_entities"]) != num_entities:
        return None
    return JudgedRanks(data["keys"], data["greater"], data["ties"], data["num_candidates"], data["score"],
                       data["num_retrieved"], num_entities)


def _merge(old: JudgedRanks, new: JudgedRanks) -> JudgedRanks:
    keys = np.concatenate([old.keys, new.keys])
    order = np.argsort(keys, kind="stable")
    pick = lambda a, b: np.concatenate([a, b])[order]  # noqa: E731
    return JudgedRanks(keys[order], pick(old.greater, new.greater), pick(old.ties, new.ties),
                       pick(old.num_candidates, new.num_candidates), pick(old.score, new.score),
                       new.num_retrieved, old.num_entities)


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


def _virtual_rows(ranking_data: dict[str, np.ndarray], rows: np.ndarray, num_entities: int) -> np.ndarray:
    """(len(rows), E) float64 virtual scores of an imported system (see the module doc)."""
    offsets = ranking_data["target_offsets"]
    values, greater, ties = ranking_data["target_values"], ranking_data["greater"], ranking_data["ties"]
    num_candidates = ranking_data["num_candidates"]
    matrix = np.full((rows.size, num_entities), -np.inf)
    for local, row in enumerate(rows.tolist()):
        entities = ranking_data["topk_entities"][row]
        scores = ranking_data["topk_scores"][row].astype(np.float64)
        valid = entities >= 0
        entities, scores = entities[valid], scores[valid]
        n_ret = entities.size
        matrix[local, entities] = scores
        for j in range(int(offsets[row]), int(offsets[row + 1])):
            g, t, n = int(greater[j]), int(ties[j]), int(num_candidates[j])
            missing = g >= n_ret and t == n - 1 - n_ret  # tied with every unretrieved candidate
            if missing or n_ret == 0:
                continue
            if t > 0 and g < n_ret:
                value = scores[g]
            elif g == 0:
                value = scores[0] + 1.0
            elif g >= n_ret:
                value = scores[n_ret - 1] - 1.0
            else:
                value = (scores[g - 1] + scores[g]) / 2.0
            matrix[local, values[j]] = value
    return matrix


def _num_retrieved(ranking_data: dict[str, np.ndarray], questions_count: int) -> np.ndarray:
    """Length of each imported run: retrieved candidates + retrieved sample answers."""
    n_ret = (ranking_data["topk_entities"] >= 0).sum(axis=1).astype(np.int64)
    offsets = ranking_data["target_offsets"]
    rows = np.repeat(np.arange(questions_count), np.diff(offsets))
    missing = (ranking_data["greater"] >= n_ret[rows]) & (ranking_data["ties"] == ranking_data["num_candidates"] - 1 - n_ret[rows])
    answered = np.bincount(rows[~missing & (n_ret[rows] > 0)], minlength=questions_count)
    return n_ret + answered


def _rank_targets(system: System, sample: Sample, questions: Questions, filter_sets: Ragged, targets: Ragged, *,
                  device: str | None, batch_size: int, progress: ProgressFn | None) -> tuple[JudgedRanks, np.ndarray]:
    """Engine pass for ``targets`` (rows aligned with ``questions``); returns ranks and per-question run length."""
    from pooling.engine.ranking import rank, score_fn_from_matrix  # torch

    kg = sample.kg
    num_entities = kg.num_entities
    rows_with = np.flatnonzero(targets.lengths > 0)
    greater = np.zeros(targets.nnz, dtype=np.int64)
    ties = np.zeros(targets.nnz, dtype=np.int64)
    num_candidates = np.zeros(targets.nnz, dtype=np.int64)
    scores = np.full(targets.nnz, np.nan)
    name = f"score {system.name}"
    if system.origin == System.Origin.TRAINED and system.checkpoint_file:
        from pooling.kge import model_score_fn, resolve_device
        from pooling.services.systems import load_system_model

        resolved = str(resolve_device(device))
        model = load_system_model(system, device=resolved)
        sub_questions, sub_filter, sub_targets = questions.take(rows_with), filter_sets.take(rows_with), targets.take(rows_with)
        recorder = _ScoreRecorder(model_score_fn(model), sub_questions, sub_targets, num_entities, max(kg.num_relations, 1))
        result = rank(recorder, sub_questions, num_entities=num_entities, filter=sub_filter, targets=sub_targets,
                      k=1, batch_size=batch_size, device=resolved,
                      progress=(lambda d, t: progress(name, d, t)) if progress else None)
        greater, ties, num_candidates, scores = result.greater, result.ties, result.num_candidates, recorder.scores
        num_retrieved = np.full(len(questions), -1, dtype=np.int64)
        keys = sub_targets.row_ids()
        keys = rows_with[keys] * num_entities + sub_targets.values
    else:
        ranking = Ranking.objects.filter(system=system, sample=sample).first()
        if ranking is None:
            raise EvaluationError(f"imported system {system.name!r} has no ranking on sample {sample.name!r}")
        data = load_arrays(ranking.ranking_file)
        num_retrieved = _num_retrieved(data, len(questions))
        parts = []
        chunk = 256
        for start in range(0, rows_with.size, chunk):
            rows = rows_with[start:start + chunk]
            matrix = _virtual_rows(data, rows, num_entities)
            sub_targets = targets.take(rows)
            part = rank(score_fn_from_matrix(matrix), questions.take(rows), num_entities=num_entities,
                        filter=filter_sets.take(rows), targets=sub_targets, k=1, batch_size=batch_size)
            local = sub_targets.row_ids()
            parts.append((rows[local] * num_entities + sub_targets.values, part.greater, part.ties,
                          part.num_candidates, matrix[local, sub_targets.values]))
            if progress:
                progress(name, min(start + chunk, rows_with.size), rows_with.size)
        if parts:
            keys, greater, ties, num_candidates, scores = (np.concatenate(x) for x in zip(*parts))
        else:
            keys = np.zeros(0, dtype=np.int64)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    order = np.argsort(keys, kind="stable")
    ranks = JudgedRanks(keys[order], greater[order].astype(np.int64), ties[order].astype(np.int64),
                        num_candidates[order].astype(np.int64), scores[order], num_retrieved, num_entities)
    return ranks, num_retrieved


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

    ``stats`` (if given) receives ``computed`` and ``cached``: the number of pairs scored now / reused.
    """
    num_entities = sample.kg.num_entities
    fingerprint = system_fingerprint(system, sample)
    relative = cache_file(system, sample)
    cached = _load_cache(relative, fingerprint, len(questions), num_entities)
    wanted_keys = universe.row_ids() * num_entities + universe.values
    if cached is None:
        cached = _empty(len(questions), num_entities)
    have = np.isin(wanted_keys, cached.keys)
    missing_rows, missing_values = universe.row_ids()[~have], universe.values[~have]
    if stats is not None:
        stats["computed"] = stats.get("computed", 0) + int(missing_values.size)
        stats["cached"] = stats.get("cached", 0) + int(have.sum())
    if missing_values.size == 0:
        return cached
    missing = Ragged.from_pairs(missing_rows, missing_values, len(questions))
    new, _num_retrieved = _rank_targets(system, sample, questions, filter_sets, missing, device=device,
                                        batch_size=batch_size, progress=progress)
    merged = _merge(cached, new)
    save_arrays(relative, keys=merged.keys, greater=merged.greater, ties=merged.ties,
                num_candidates=merged.num_candidates, score=merged.score, num_retrieved=merged.num_retrieved,
                num_entities=np.int64(num_entities), fingerprint=np.array(fingerprint))
    return merged


def union_universe(questions: Questions, test_triples: np.ndarray, *label_triples: np.ndarray) -> Ragged:
    """Per question: its test answers and every entity labelled in any of ``label_triples``."""
    return known_answers(questions, test_triples, *label_triples)
