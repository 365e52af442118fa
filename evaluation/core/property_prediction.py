"""Property prediction (issue #16): which relations does an entity have that the graph does not yet record?

Questions (Shirvani-Mahdavi, Akrami and Li, "On large-scale evaluation of embedding models for knowledge graph
completion"): every distinct test pair (h, r) where h has no triple (h, r, *) in train. For each question the
system scores every relation for h; the rank of r is taken among the candidate relations, i.e. all relations
except the ones h already has in ``known`` (filtered setting: by default train's (h, r) pairs; a caller may add
valid / test pairs, as link prediction filters all known answers). The target r itself always competes.

Ranks use the project's tie policy (``pooling.engine.ranking``, SPEC 5.1): realistic rank = 1 + #candidates
scored above r + (#other candidates tied with r) / 2; ``optimistic`` / ``pessimistic`` count none / all of the
ties. NaN scores count as -inf. MR, MRR and Hits@K are then :func:`evaluation.core.micro.micro_metrics` of the
ranks (see :func:`property_metrics`).

How a system scores a relation for a head is its own business (a :data:`RelationScorer`); for embedding models
the study's text available to us does not state it, so ``pooling.kge.protocol_scoring.relation_scorer`` uses a
documented choice: score(h, r) = max over all tails t of score(h, r, t).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, Union

import numpy as np

from evaluation.core import micro

__all__ = ["RelationScorer", "property_questions", "property_ranks", "property_metrics"]

#: head_ids -> scores [len(head_ids), num_relations], higher = the head more plausibly has the relation.
RelationScorer = Callable[[np.ndarray], np.ndarray]
TiePolicy = Literal["realistic", "optimistic", "pessimistic"]
KnownLike = Union[np.ndarray, Iterable[tuple[int, int]]]


def _head_relation_pairs(data: KnownLike) -> np.ndarray:
    """(h, r) pairs [n, 2] from triples [n, 3] (h, r, t) or pairs [n, 2] / a set of (h, r) tuples."""
    array = np.asarray(data if isinstance(data, np.ndarray) else list(data), dtype=np.int64)
    if array.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise ValueError("expected (h, r, t) triples or (h, r) pairs")
    return array[:, :2]


def _keys(pairs: np.ndarray, num_relations: int) -> np.ndarray:
    return pairs[:, 0] * num_relations + pairs[:, 1]


def property_questions(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(heads, relations): the distinct test (h, r) with no (h, r, *) in train, sorted by (h, r)."""
    train_pairs = _head_relation_pairs(train)
    test_pairs = _head_relation_pairs(test)
    num_relations = int(max(train_pairs[:, 1].max(initial=-1), test_pairs[:, 1].max(initial=-1))) + 1
    test_keys = np.unique(_keys(test_pairs, num_relations))
    fresh = test_keys[~np.isin(test_keys, _keys(train_pairs, num_relations))]
    return fresh // num_relations, fresh % num_relations


def property_ranks(score_relations: RelationScorer, heads: np.ndarray, relations: np.ndarray,
                   known: KnownLike, *, num_relations: int | None = None, batch_size: int = 1024,
                   policy: TiePolicy = "realistic") -> np.ndarray:
    """Filtered rank (float64) of every question's relation among the relations its head does not have in
    ``known`` (triples or (h, r) pairs), the target always kept. Each distinct head is scored once, in
    batches of ``batch_size`` heads."""
    heads = np.asarray(heads, dtype=np.int64).reshape(-1)
    relations = np.asarray(relations, dtype=np.int64).reshape(-1)
    if heads.shape != relations.shape:
        raise ValueError("heads and relations must have the same length")
    if policy not in ("realistic", "optimistic", "pessimistic"):
        raise ValueError(f"unknown tie policy {policy!r}")
    known_pairs = _head_relation_pairs(known)
    ranks = np.zeros(len(heads), dtype=np.float64)
    if not len(heads):
        return ranks
    unique_heads, question_head = np.unique(heads, return_inverse=True)
    for first in range(0, len(unique_heads), batch_size):
        batch_heads = unique_heads[first:first + batch_size]
        scores = np.asarray(score_relations(batch_heads), dtype=np.float64)
        if scores.ndim != 2 or scores.shape[0] != len(batch_heads):
            raise ValueError(f"relation scorer returned shape {scores.shape}, expected ({len(batch_heads)}, R)")
        if num_relations is not None and scores.shape[1] != num_relations:
            raise ValueError(f"relation scorer returned {scores.shape[1]} relations, expected {num_relations}")
        width = scores.shape[1]
        if relations.max() >= width or relations.min() < 0:
            raise ValueError(f"question relation ids must lie in 0..{width - 1}")
        scores = np.where(np.isnan(scores), -np.inf, scores)
        # Known (h, r) of this batch's heads are removed from the candidates.
        in_batch = np.isin(known_pairs[:, 0], batch_heads) & (known_pairs[:, 1] < width)
        candidate = np.ones(scores.shape, dtype=bool)
        candidate[np.searchsorted(batch_heads, known_pairs[in_batch, 0]), known_pairs[in_batch, 1]] = False
        questions = np.flatnonzero((question_head >= first) & (question_head < first + len(batch_heads)))
        rows = question_head[questions] - first
        target_scores = scores[rows, relations[questions]]
        row_scores, row_candidates = scores[rows], candidate[rows]
        row_candidates[np.arange(len(rows)), relations[questions]] = False  # "other than the target"
        greater = ((row_scores > target_scores[:, None]) & row_candidates).sum(axis=1)
        ties = ((row_scores == target_scores[:, None]) & row_candidates).sum(axis=1)
        tie_weight = {"realistic": 0.5, "optimistic": 0.0, "pessimistic": 1.0}[policy]
        ranks[questions] = 1.0 + greater + tie_weight * ties
    return ranks


def property_metrics(ranks: np.ndarray, hits: Sequence[int] = micro.DEFAULT_HITS) -> dict[str, float]:
    """MR, MRR, Hits@K of the property ranks (``evaluation.core.micro``)."""
    return micro.micro_metrics(ranks, hits)
