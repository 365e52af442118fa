"""PyKEEN's rank-based metric family from ranks and candidate counts (pure numpy, no Django, no torch).

Every ranking i has a (possibly fractional) rank r_i and N_i = |E_i| candidates left after filtering (the answer
included). The chance-adjusted metrics compare a value M with its expectation E[M] and variance V[M] when every
r_i is uniform on {1, ..., N_i}, independently; so they put KGs of different sizes on one scale. Each value equals
the PyKEEN 1.11.1 class named beside it (``pykeen.metrics.ranking``) on the same ranks, ``num_candidates`` and
weights (tests/test_eval_rank_family_pykeen.py):

    MR, MRR, Hits@k   ArithmeticMeanRank, InverseHarmonicMeanRank, HitsAtK (as evaluation.core.micro)
    AMR               AdjustedArithmeticMeanRank       MR / E[MR]; 1 = random, lower is better, in (0, 2)
    AMRI              AdjustedArithmeticMeanRankIndex  (MR - E[MR]) / (1 - E[MR]); 1 = perfect, 0 = random
    zMR               ZArithmeticMeanRank              -(MR - E[MR]) / sqrt(V[MR]); larger is better
    AMRR, zMRR        AdjustedInverseHarmonicMeanRank, ZInverseHarmonicMeanRank (re-indexed / z-scored MRR)
    AHits@k, zHits@k  AdjustedHitsAtK, ZHitsAtK
    GMR, IGMR         GeometricMeanRank, InverseGeometricMeanRank (1 / GMR)
    AGMRI, zGMR       AdjustedGeometricMeanRankIndex, ZGeometricMeanRank
    HMR               HarmonicMeanRank (1 / MRR)
    MedR              MedianRank
    RankStd, RankVar  StandardDeviation, Variance (population, ddof = 0)
    RankMAD           MedianAbsoluteDeviation (scaled to a normal standard deviation: / 0.67449)

Expectations and variances, with normalised weights w_i (1/n without weights):
E[r] = (N+1)/2, V[r] = (N^2-1)/12; E[1/r] = H_1(N)/N, V[1/r] = (N H_2(N) - H_1(N)^2)/N^2; E[r <= k] = p =
min(k/N, 1), V = p(1-p); a weighted mean has E = sum w_i E_i and V = sum w_i^2 V_i. GMR = prod r_i^(w_i) has
E = prod E[r_i^(w_i)] and V = prod E[r_i^(2 w_i)] - E^2, with E[r^u] = (1/N) sum_{j<=N} j^u.

Conventions:

- Ranks are used as given, whatever the tie policy that produced them (optimistic, pessimistic or realistic =
  their mean, which is PyKEEN's realistic rank too); the expectations are PyKEEN's, for uniform integer ranks.
- An index or z-score whose denominator is zero is NaN: every (weighted) ranking has N = 1 (AMRI, zMR, AMRR,
  zMRR, AGMRI, zGMR), or N <= k (AHits@k, zHits@k). Nothing is random there; PyKEEN divides by 1e-12 instead.
- Weights (per-relation reweighting, SPEC 5.2, via :func:`per_ranking_weights`) are supported by every metric,
  as in PyKEEN, except: PyKEEN ignores weights in RankStd/RankVar (here: weighted population moments), and its
  weighted RankMAD drops the normal scale that its unweighted one applies (here: the scale in both cases, so
  weighted and unweighted MADs are on one scale). Rankings with weight 0 are left out. The GMR expectation
  costs one pass over 1..max N per distinct weight: per-relation weights have at most |R| of them.
- E[GMR] and V[GMR] are computed without cancellation (see :func:`_power_moments`): on 10^5 rankings zGMR is
  1e-15 off a 40-digit mpmath reference, PyKEEN's prod(...) - prod(...)^2 3e-5 off (1e-9 at 10^3 rankings).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.core.micro import DEFAULT_HITS

#: Phi^-1(3/4): MAD / this estimates the standard deviation of normal data (scipy's scale="normal").
NORMAL_MAD_SCALE = 0.6744897501960817

__all__ = ["DEFAULT_HITS", "family_names", "added_names", "rank_family", "per_ranking_weights"]


def family_names(hits: Sequence[int] = DEFAULT_HITS) -> list[str]:
    """Every key of :func:`rank_family`, in its order."""
    return (["MR", "MRR"] + [f"Hits@{k}" for k in hits]
            + ["AMR", "AMRI", "zMR", "AMRR", "zMRR"] + [f"AHits@{k}" for k in hits] + [f"zHits@{k}" for k in hits]
            + ["GMR", "IGMR", "AGMRI", "zGMR", "HMR", "MedR", "RankStd", "RankVar", "RankMAD"])


def added_names(hits: Sequence[int] = DEFAULT_HITS) -> list[str]:
    """The keys beyond the plain MR / MRR / Hits@k of :mod:`evaluation.core.micro`."""
    return family_names(hits)[2 + len(hits):]


def per_ranking_weights(relation: np.ndarray, relation_weights: np.ndarray) -> np.ndarray:
    """Weights per ranking that make a weighted mean equal sum_p w_p * (mean over relation p's rankings), SPEC 5.2.

    ``relation_weights[p]`` is the weight of relation id p (normalised here); ranking i gets
    w_p / (number of rankings of p). Same checks as :func:`evaluation.core.micro.reweighted`.
    """
    relation = np.asarray(relation, dtype=np.int64)
    relation_weights = np.asarray(relation_weights, dtype=np.float64)
    if np.any(~np.isfinite(relation_weights)) or np.any(relation_weights < 0) or relation_weights.sum() <= 0:
        raise ValueError("weights must be finite, non-negative, with a positive sum")
    if relation.size and (relation.min() < 0 or relation.max() >= len(relation_weights)):
        raise ValueError("a ranking has a relation id without a weight")
    counts = np.bincount(relation, minlength=len(relation_weights))
    missing = (relation_weights > 0) & (counts == 0)
    if missing.any():
        raise ValueError(f"relations {np.flatnonzero(missing)[:5].tolist()} have weight but no ranking")
    share = np.divide(relation_weights, counts, out=np.zeros_like(relation_weights), where=counts > 0)
    return share[relation] / relation_weights.sum()


def _validated(ranks: np.ndarray, num_candidates: np.ndarray, weights: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """1-D float ranks, int64 candidate counts and weights summing to 1, without the weight-0 rankings."""
    ranks = np.asarray(ranks, dtype=np.float64).reshape(-1)
    candidates = np.asarray(num_candidates).reshape(-1)
    if candidates.shape != ranks.shape:
        raise ValueError("ranks and num_candidates must have the same length")
    if candidates.size and (np.any(candidates != np.floor(candidates)) or np.any(candidates < 1)):
        raise ValueError("num_candidates must be integers >= 1")
    candidates = candidates.astype(np.int64)
    if np.any(~(ranks >= 1)) or np.any(ranks > candidates):  # ~(>=) also catches NaN
        raise ValueError("every rank must satisfy 1 <= rank <= num_candidates")
    if weights is None:
        return ranks, candidates, np.full(ranks.size, 1.0 / ranks.size) if ranks.size else np.zeros(0)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    if weights.shape != ranks.shape:
        raise ValueError("weights must have one value per ranking")
    if np.any(~np.isfinite(weights)) or np.any(weights < 0) or (ranks.size and weights.sum() <= 0):
        raise ValueError("weights must be finite, non-negative, with a positive sum")
    kept = weights > 0
    return ranks[kept], candidates[kept], weights[kept] / weights[kept].sum()


def _harmonic_tables(max_candidates: int) -> tuple[np.ndarray, np.ndarray]:
    """H_1(N) and H_2(N) for N = 1..max, index N - 1."""
    j = np.arange(1, max_candidates + 1, dtype=np.float64)
    return np.cumsum(1.0 / j), np.cumsum(1.0 / (j * j))


def _power_moments(candidates: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For r_i uniform on 1..N_i and u_i = w_i: log E[r^u] and log E[r^2u] - 2 log E[r^u] per ranking.

    With a_j = j^u - 1 = expm1(u log j) (tiny for tiny u, kept exact by expm1): E[r^u] = 1 + mean a, and
    E[r^2u] / E[r^u]^2 = 1 + var(a) / (1 + mean a)^2, var(a) from a running sum of squared deviations (Welford's
    increments (a_j - mean_{j-1})(a_j - mean_j) >= 0): no difference of two nearly equal products, which is where
    prod E[r^2u] - (prod E[r^u])^2 loses its digits. One pass over j per distinct weight (one without weights).
    """
    log_first = np.empty(candidates.size, dtype=np.float64)
    log_ratio = np.empty(candidates.size, dtype=np.float64)
    if weights.min() == weights.max():  # unweighted: one group, no need to sort the weights
        groups: list[tuple[float, np.ndarray | slice]] = [(float(weights[0]), slice(None))]
    else:
        distinct, inverse = np.unique(weights, return_inverse=True)
        groups = [(float(weight), inverse == position) for position, weight in enumerate(distinct)]
    for weight, members in groups:
        counts = candidates[members]
        j = np.arange(1, counts.max() + 1, dtype=np.float64)
        a = np.expm1(weight * np.log(j))
        mean = np.cumsum(a) / j
        previous = np.concatenate(([0.0], mean[:-1]))  # the j = 1 increment is 0 whatever it is
        variance = np.cumsum((a - previous) * (a - mean)) / j
        log_first[members] = np.log1p(mean[counts - 1])
        log_ratio[members] = np.log1p(variance[counts - 1] / (1.0 + mean[counts - 1]) ** 2)
    return log_first, log_ratio


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """PyKEEN's weighted median: the first value whose cumulative weight reaches 1/2 (mean of two on exactly 1/2)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    cdf = np.cumsum(weights[order])
    cdf /= cdf[-1]
    index = int(np.searchsorted(cdf, 0.5))
    if cdf[index] == 0.5:
        return float(ordered[index:index + 2].mean())
    return float(ordered[index])


def _ratio(numerator: float, denominator: float, degenerate: bool) -> float:
    return float("nan") if degenerate else numerator / denominator


def rank_family(
    ranks: np.ndarray,
    num_candidates: np.ndarray,
    hits: Sequence[int] = DEFAULT_HITS,
    weights: np.ndarray | None = None,
) -> dict[str, float]:
    """Every metric of :func:`family_names` for these rankings (NaN for all of them when there is none)."""
    if any(int(k) != k or k < 1 for k in hits):
        raise ValueError("hits cut-offs must be integers >= 1")
    weighted = weights is not None
    ranks, candidates, w = _validated(ranks, num_candidates, weights)
    if ranks.size == 0:
        return dict.fromkeys(family_names(hits), float("nan"))
    n = candidates.astype(np.float64)
    trivial = bool(np.all(candidates == 1))  # nothing is random: the index / z denominators vanish
    values: dict[str, float] = {}

    # arithmetic mean rank
    mr = float(w @ ranks)
    mr_expected = float(w @ ((n + 1.0) / 2.0))
    mr_variance = float((w * w) @ ((n * n - 1.0) / 12.0))
    # inverse harmonic mean rank (MRR)
    h1, h2 = _harmonic_tables(int(candidates.max()))
    h1_n, h2_n = h1[candidates - 1], h2[candidates - 1]
    mrr = float(w @ (1.0 / ranks))
    mrr_expected = float(w @ (h1_n / n))
    mrr_variance = float((w * w) @ np.maximum((n * h2_n - h1_n * h1_n) / (n * n), 0.0))

    values["MR"], values["MRR"] = mr, mrr
    hit_stats = []
    for k in hits:
        p = np.minimum(k / n, 1.0)
        hit = float(w @ (ranks <= k))
        hit_stats.append((k, hit, float(w @ p), float((w * w) @ (p * (1.0 - p))), bool(np.all(candidates <= k))))
        values[f"Hits@{k}"] = hit
    values["AMR"] = mr / mr_expected
    values["AMRI"] = _ratio(mr - mr_expected, 1.0 - mr_expected, trivial)
    values["zMR"] = _ratio(-(mr - mr_expected), np.sqrt(mr_variance), trivial)
    values["AMRR"] = _ratio(mrr - mrr_expected, 1.0 - mrr_expected, trivial)
    values["zMRR"] = _ratio(mrr - mrr_expected, np.sqrt(mrr_variance), trivial)
    for k, hit, expected, variance, degenerate in hit_stats:
        values[f"AHits@{k}"] = _ratio(hit - expected, 1.0 - expected, degenerate)
    for k, hit, expected, variance, degenerate in hit_stats:
        values[f"zHits@{k}"] = _ratio(hit - expected, np.sqrt(variance), degenerate)

    # geometric mean rank: E = prod E[r^w], V = prod E[r^2w] - E^2 = E^2 expm1(sum(log E[r^2w] - 2 log E[r^w]))
    gmr = float(np.exp(w @ np.log(ranks)))
    log_first, log_ratio = _power_moments(candidates, w)
    gmr_expected = float(np.exp(log_first.sum()))
    gmr_variance = gmr_expected ** 2 * float(np.expm1(log_ratio.sum()))
    values["GMR"], values["IGMR"] = gmr, 1.0 / gmr
    values["AGMRI"] = _ratio(gmr - gmr_expected, 1.0 - gmr_expected, trivial)
    values["zGMR"] = _ratio(-(gmr - gmr_expected), np.sqrt(gmr_variance), trivial)
    values["HMR"] = 1.0 / mrr

    # location and spread of the ranks themselves
    if weighted:
        median = _weighted_median(ranks, w)
        mad = _weighted_median(np.abs(ranks - median), w)
        variance = float(w @ (ranks - mr) ** 2)
    else:
        median = float(np.median(ranks))
        mad = float(np.median(np.abs(ranks - median)))
        variance = float(ranks.var())
    values["MedR"] = median
    values["RankStd"], values["RankVar"] = float(np.sqrt(variance)), variance
    values["RankMAD"] = mad / NORMAL_MAD_SCALE
    return {name: values[name] for name in family_names(hits)}
