"""PROBE and related rank-transform metrics (SPEC 5.4). Pure numpy, no Django.

PROBE scores each ranked query i (answer entity a_i, relation r_i, rank r_i among N_i candidates) with a
rank transformer f*(r) in [0, 1] and averages with popularity weights computed on the TRAIN split:

    f*(r)  = (r^-alpha - N^-alpha) / (1 - N^-alpha)          alpha != 0
    f*(r)  = 1 - ln r / ln N                                   alpha == 0
    w_i    = (eps_e + delta(a_i))^-beta * (eps_r + delta(r_i|a_i))^-beta
    PROBE  = sum_i w_i f*(r_i) / sum_i w_i

Conventions decided here (documented because the SPEC leaves them open):

- N = 1 (only the answer is left after filtering): the rank must be 1 and f* = 1 for every alpha (a perfect
  answer); the formulas would give 0/0.
- A self-loop train triple (a, r, a) contains a twice, as in the PROBE authors' code: it adds 2 to d(a) and 2
  to the (r, a) count. So d(a) counts entity occurrences (head and tail slots), sum_a delta(a) = 1 exactly, and
  delta(r|a) stays a proportion in [0, 1] (both counts grow by 2). Counting it once instead moved PROBE on
  WN18RR (7 self-loops in train) at beta > 0 by up to 2.2e-5.
- eps_e / eps_r are the smallest non-zero delta over the *evaluated* queries passed in, not over all
  entities. If every delta of the evaluated queries is zero, eps is set to 1: the weights are then equal
  whatever eps is, so the choice does not change the score.
- Score arrays may carry leading system axes: ranks of shape (..., Q) give scores of shape (...); the weights
  depend only on the queries (shape (Q,)) and are shared by all systems.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA_GRID: tuple[float, ...] = (1.0, 0.5, 0.0, -0.5, -1.0)  # swept at beta = 0
BETA_GRID: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8)  # swept at alpha = 1
P_MRR_GRID: tuple[float, ...] = (1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4, 1.0)

__all__ = [
    "ALPHA_GRID",
    "BETA_GRID",
    "P_MRR_GRID",
    "TrainPopularity",
    "rank_transform",
    "probe_weights",
    "probe_score",
    "probe_alpha_grid",
    "probe_beta_grid",
    "probe_heatmap",
    "minmax_normalise",
    "p_mrr",
    "log_mrr",
]


def _validated_ranks(ranks: np.ndarray, num_candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ranks = np.asarray(ranks, dtype=np.float64)
    num_candidates = np.asarray(num_candidates, dtype=np.float64)
    if np.any(num_candidates < 1):
        raise ValueError("num_candidates must be >= 1")
    ranks_b, n_b = np.broadcast_arrays(ranks, num_candidates)
    if np.any(~np.isfinite(ranks_b)) or np.any(ranks_b < 1) or np.any(ranks_b > n_b):
        raise ValueError("every rank must satisfy 1 <= rank <= num_candidates")
    return ranks, num_candidates


def rank_transform(ranks: np.ndarray, num_candidates: np.ndarray, alpha: float) -> np.ndarray:
    """f*(r) of SPEC 5.4, elementwise; ``ranks`` (..., Q) broadcast against ``num_candidates`` (Q,).

    Computed as expm1(alpha (ln N - ln r)) / expm1(alpha ln N), which is algebraically the SPEC formula
    (multiply numerator and denominator by N^alpha) but has no cancellation for |alpha| near 0 and tends to
    the alpha = 0 branch 1 - ln r / ln N continuously.
    """
    ranks, num_candidates = _validated_ranks(ranks, num_candidates)
    log_r = np.log(ranks)
    log_n = np.log(num_candidates)
    with np.errstate(divide="ignore", invalid="ignore"):
        if alpha == 0:
            transformed = 1.0 - log_r / log_n
        else:
            transformed = np.expm1(alpha * (log_n - log_r)) / np.expm1(alpha * log_n)
    # N == 1 gives 0/0 above; the only possible rank is 1, a perfect answer.
    return np.where(np.broadcast_to(num_candidates, transformed.shape) == 1, 1.0, transformed)


@dataclass(frozen=True)
class TrainPopularity:
    """Entity and relation-given-entity popularity counted on the train triples (integer ids).

    ``entity_degree[a]`` = d(a) = number of train triples containing a, a self-loop (a, r, a) counting twice
    (once as head, once as tail); ``pair_keys``/``pair_counts``: sorted keys a * num_relations + r with the
    number of train triples of relation r containing a, counted the same way. Stored sparsely: |E| x |R| can be
    far larger than the number of observed pairs.
    """

    entity_degree: np.ndarray
    pair_keys: np.ndarray
    pair_counts: np.ndarray
    num_relations: int
    num_train_triples: int

    @classmethod
    def from_triples(
        cls, train_triples: np.ndarray, num_entities: int | None = None, num_relations: int | None = None
    ) -> TrainPopularity:
        """``train_triples``: int array (n, 3) of (head, relation, tail) ids >= 0."""
        triples = np.asarray(train_triples, dtype=np.int64).reshape(-1, 3)
        if triples.size and triples.min() < 0:
            raise ValueError("ids must be non-negative")
        heads, relations, tails = triples[:, 0], triples[:, 1], triples[:, 2]
        # Every head and every tail slot is one occurrence: (a, r, a) contains a twice (the authors' counting).
        entity_occurrences = np.concatenate([heads, tails])
        relation_occurrences = np.concatenate([relations, relations])
        # bincount's length is already max(largest id + 1, minlength); no triple and no size given: 0 relations
        n_relations = max(num_relations or 0, int(relations.max()) + 1 if relations.size else 0)
        degree = np.bincount(entity_occurrences, minlength=num_entities or 0)
        keys, counts = np.unique(entity_occurrences * n_relations + relation_occurrences, return_counts=True)
        return cls(degree, keys, counts, n_relations, len(triples))

    def entity_delta(self, entities: np.ndarray) -> np.ndarray:
        """delta(a) = d(a) / (2 |T_train|); entities never seen in train (or beyond the id range) get 0."""
        entities = np.asarray(entities, dtype=np.int64)
        known = (entities >= 0) & (entities < len(self.entity_degree))
        degree = np.zeros(entities.shape, dtype=np.float64)
        degree[known] = self.entity_degree[entities[known]]
        if self.num_train_triples == 0:
            return degree  # all zero
        return degree / (2.0 * self.num_train_triples)

    def relation_given_entity(self, entities: np.ndarray, relations: np.ndarray) -> np.ndarray:
        """delta(r|a) = (# train triples of relation r containing a) / d(a); 0 when d(a) = 0."""
        entities = np.asarray(entities, dtype=np.int64)
        relations = np.asarray(relations, dtype=np.int64)
        entities, relations = np.broadcast_arrays(entities, relations)
        known = (entities >= 0) & (entities < len(self.entity_degree))
        known &= (relations >= 0) & (relations < self.num_relations)
        pair_count = np.zeros(entities.shape, dtype=np.float64)
        if self.pair_keys.size and known.any():
            query_keys = entities[known] * self.num_relations + relations[known]
            position = np.minimum(np.searchsorted(self.pair_keys, query_keys), len(self.pair_keys) - 1)
            found = self.pair_keys[position] == query_keys
            pair_count[known] = np.where(found, self.pair_counts[position], 0)
        degree = np.zeros(entities.shape, dtype=np.float64)
        degree[known] = self.entity_degree[entities[known]]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(degree > 0, pair_count / degree, 0.0)

    def query_deltas(self, answer_entities: np.ndarray, relations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(delta(a_i), delta(r_i|a_i)) for every query."""
        return self.entity_delta(answer_entities), self.relation_given_entity(answer_entities, relations)


def _smallest_nonzero(values: np.ndarray) -> float:
    nonzero = values[values > 0]
    return float(nonzero.min()) if nonzero.size else 1.0  # all zero: any eps gives equal weights


def probe_weights(entity_delta: np.ndarray, relation_delta: np.ndarray, beta: float) -> np.ndarray:
    """w_i = (eps_e + delta(a_i))^-beta * (eps_r + delta(r_i|a_i))^-beta, eps from these queries only."""
    entity_delta = np.asarray(entity_delta, dtype=np.float64)
    relation_delta = np.asarray(relation_delta, dtype=np.float64)
    if beta == 0:
        return np.ones(np.broadcast_shapes(entity_delta.shape, relation_delta.shape))
    eps_e = _smallest_nonzero(entity_delta)
    eps_r = _smallest_nonzero(relation_delta)
    return np.power(eps_e + entity_delta, -beta) * np.power(eps_r + relation_delta, -beta)


def probe_score(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    entity_delta: np.ndarray,
    relation_delta: np.ndarray,
    alpha: float = 1.0,
    beta: float = 0.0,
) -> np.ndarray | float:
    """PROBE for ``ranks`` (Q,) -> float, or (..., Q) -> array (...) with one score per system."""
    weights = probe_weights(entity_delta, relation_delta, beta)
    transformed = rank_transform(ranks, num_candidates, alpha)
    score = transformed @ weights / weights.sum()
    return float(score) if np.ndim(score) == 0 else score


def probe_alpha_grid(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    entity_delta: np.ndarray,
    relation_delta: np.ndarray,
    alphas: Sequence[float] = ALPHA_GRID,
    beta: float = 0.0,
) -> np.ndarray:
    """PROBE for each alpha at fixed beta: shape (len(alphas),) + ranks.shape[:-1]."""
    return probe_heatmap(ranks, num_candidates, entity_delta, relation_delta, alphas, (beta,), normalise=False)[
        :, 0
    ]


def probe_beta_grid(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    entity_delta: np.ndarray,
    relation_delta: np.ndarray,
    betas: Sequence[float] = BETA_GRID,
    alpha: float = 1.0,
) -> np.ndarray:
    """PROBE for each beta at fixed alpha: shape (len(betas),) + ranks.shape[:-1]."""
    return probe_heatmap(ranks, num_candidates, entity_delta, relation_delta, (alpha,), betas, normalise=False)[0]


def minmax_normalise(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """(x - min) / (max - min) along ``axis`` (the systems); a constant slice maps to 0 (no spread to show)."""
    scores = np.asarray(scores, dtype=np.float64)
    low = scores.min(axis=axis, keepdims=True)
    spread = scores.max(axis=axis, keepdims=True) - low
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(spread > 0, (scores - low) / spread, 0.0)


def probe_heatmap(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    entity_delta: np.ndarray,
    relation_delta: np.ndarray,
    alphas: Sequence[float] = ALPHA_GRID,
    betas: Sequence[float] = BETA_GRID,
    normalise: bool = True,
) -> np.ndarray:
    """PROBE over the full alpha x beta grid: shape (len(alphas), len(betas)) + ranks.shape[:-1].

    ``ranks`` is (systems, Q) for a heatmap; with ``normalise`` each (alpha, beta) cell is min-max normalised
    across the systems (last axis), as in the published heatmaps, so that cells with very different scales
    compare the systems' relative positions.
    """
    transformed = np.stack([rank_transform(ranks, num_candidates, alpha) for alpha in alphas])  # (A, ..., Q)
    weights = np.stack([probe_weights(entity_delta, relation_delta, beta) for beta in betas])  # (B, Q)
    weights = np.broadcast_to(weights, (len(betas), transformed.shape[-1]))
    weighted = np.tensordot(transformed, weights / weights.sum(axis=1, keepdims=True), axes=([-1], [1]))
    scores = np.moveaxis(weighted, -1, 1)  # (A, ..., B) -> (A, B, ...)
    if normalise:
        if scores.ndim < 3:
            raise ValueError("normalisation across systems needs ranks of shape (systems, Q)")
        scores = minmax_normalise(scores, axis=-1)
    return scores


def p_mrr(ranks: np.ndarray, p: float = 1.0) -> np.ndarray | float:
    """p-MRR: mean of r^-p over the last axis (p = 1 is MRR)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if np.any(ranks < 1):
        raise ValueError("ranks must be >= 1")
    score = np.power(ranks, -p).mean(axis=-1)
    return float(score) if np.ndim(score) == 0 else score


def log_mrr(ranks: np.ndarray) -> np.ndarray | float:
    """log-MRR: mean of ln 2 / ln(r + 1) over the last axis (1 at rank 1, the DCG discount)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if np.any(ranks < 1):
        raise ValueError("ranks must be >= 1")
    score = (np.log(2.0) / np.log1p(ranks)).mean(axis=-1)
    return float(score) if np.ndim(score) == 0 else score
