"""The rank-based family (evaluation.core.rank_family) equals PyKEEN 1.11.1's metric classes on the same ranks.

Random fuzz over rank arrays with ties (optimistic, pessimistic and fractional realistic ranks), tiny candidate
counts (1 and 2, PyKEEN's edge cases), with and without weights; PyKEEN's own rank computation from tied scores;
and zGMR on many rankings against a 40-digit mpmath reference (where PyKEEN itself loses digits).
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from evaluation.core.rank_family import family_names, rank_family

import pykeen.metrics.ranking as pr  # noqa: E402

HITS = (1, 3, 10)
RTOL, ATOL = 1e-9, 1e-12


def pykeen_metrics(hits=HITS) -> dict[str, object]:
    """Our name -> the PyKEEN metric object it must equal."""
    metrics = {
        "MR": pr.ArithmeticMeanRank(), "MRR": pr.InverseHarmonicMeanRank(),
        "AMR": pr.AdjustedArithmeticMeanRank(), "AMRI": pr.AdjustedArithmeticMeanRankIndex(),
        "zMR": pr.ZArithmeticMeanRank(), "AMRR": pr.AdjustedInverseHarmonicMeanRank(),
        "zMRR": pr.ZInverseHarmonicMeanRank(), "GMR": pr.GeometricMeanRank(), "IGMR": pr.InverseGeometricMeanRank(),
        "AGMRI": pr.AdjustedGeometricMeanRankIndex(), "zGMR": pr.ZGeometricMeanRank(), "HMR": pr.HarmonicMeanRank(),
        "MedR": pr.MedianRank(), "RankStd": pr.StandardDeviation(), "RankVar": pr.Variance(),
        "RankMAD": pr.MedianAbsoluteDeviation(),
    }
    for k in hits:
        metrics[f"Hits@{k}"] = pr.HitsAtK(k)
        metrics[f"AHits@{k}"] = pr.AdjustedHitsAtK(k=k)
        metrics[f"zHits@{k}"] = pr.ZHitsAtK(k=k)
    assert sorted(metrics) == sorted(family_names(hits))
    return metrics


def degenerate(name: str, candidates: np.ndarray) -> bool:
    """Our NaN cases: nothing random (all N = 1), or N <= k for every ranking (Hits@k)."""
    if name.startswith(("AHits@", "zHits@")):
        return bool(np.all(candidates <= int(name.split("@")[1])))
    return name in ("AMRI", "zMR", "AMRR", "zMRR", "AGMRI", "zGMR") and bool(np.all(candidates == 1))


def tied_ranks(rng: np.random.Generator, size: int, max_candidates: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Candidate counts (many 1 and 2) and the three tie policies' ranks of random (greater, ties) counts."""
    candidates = np.where(rng.random(size) < 0.3, rng.integers(1, 3, size), rng.integers(1, max_candidates + 1, size))
    greater = np.floor(rng.random(size) ** 3 * candidates).astype(np.int64)  # 0 .. N-1, mostly small
    ties = np.floor(rng.random(size) * (candidates - greater)).astype(np.int64)  # 1 + greater + ties <= N
    ties[rng.random(size) < 0.5] = 0
    ranks = {"optimistic": 1.0 + greater, "pessimistic": 1.0 + greater + ties, "realistic": 1.0 + greater + ties / 2}
    return ranks, candidates


CASES = [(size, max_candidates) for size, max_candidates in
         [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (1, 40), (5, 3), (7, 12), (40, 5), (60, 200), (300, 15_000)] * 3]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_every_metric_equals_pykeen(weighted: bool) -> None:
    compared = degenerate_nan = 0
    for seed, (size, max_candidates) in enumerate(CASES):
        rng = np.random.default_rng(1000 * seed + weighted)
        rank_sets, candidates = tied_ranks(rng, size, max_candidates)
        weights = rng.choice([0.5, 1.0, 2.0, 3.7], size) if weighted else None
        for policy, ranks in rank_sets.items():
            ours = rank_family(ranks, candidates, HITS, weights)
            case = (seed, policy, ranks.tolist()[:5], candidates.tolist()[:5])
            for name, metric in pykeen_metrics().items():
                if degenerate(name, candidates):
                    assert math.isnan(ours[name]), (name, case)
                    degenerate_nan += 1
                    continue
                expected = metric(ranks=ranks, num_candidates=candidates, weights=weights)
                if weighted and name in ("RankStd", "RankVar"):  # PyKEEN ignores weights there: weighted moments
                    variance = np.average((ranks - np.average(ranks, weights=weights)) ** 2, weights=weights)
                    expected = variance if name == "RankVar" else math.sqrt(variance)
                elif weighted and name == "RankMAD":  # PyKEEN's weighted MAD lacks its unweighted normal scale
                    expected /= 0.6744897501960817
                assert ours[name] == pytest.approx(expected, rel=RTOL, abs=ATOL), (name, case)
                compared += 1
    print(f"\nrank family vs PyKEEN ({'weighted' if weighted else 'unweighted'}): {compared} values equal, "
          f"{degenerate_nan} degenerate values NaN")
    assert compared > 1500 and degenerate_nan > 200


def test_pykeen_rank_computation_from_tied_scores() -> None:
    """PyKEEN's Ranks.from_scores (filtered entries NaN) gives the same ranks and candidate counts as counting
    greater / tied candidates, and the metrics on them agree: PyKEEN's realistic rank is our realistic rank."""
    import torch
    from pykeen.evaluation.ranks import Ranks

    rng = np.random.default_rng(7)
    scores = rng.integers(0, 6, (400, 30)).astype(np.float64)  # few distinct scores: many ties
    answer = rng.integers(0, 30, 400)
    filtered = rng.random((400, 30)) < 0.4
    filtered[np.arange(400), answer] = False
    masked = np.where(filtered, np.nan, scores)
    true_score = scores[np.arange(400), answer][:, None]
    pykeen_ranks = Ranks.from_scores(torch.as_tensor(true_score), torch.as_tensor(masked))
    valid = ~filtered
    greater = (valid & (scores > true_score)).sum(1)
    ties = (valid & (scores == true_score)).sum(1) - 1
    candidates = valid.sum(1)
    ours_ranks = {"optimistic": 1.0 + greater, "pessimistic": 1.0 + greater + ties,
                  "realistic": 1.0 + greater + ties / 2}
    np.testing.assert_array_equal(pykeen_ranks.number_of_options.numpy(), candidates)
    for policy, tensor in pykeen_ranks.to_type_dict().items():
        theirs = tensor.numpy().astype(np.float64)
        np.testing.assert_array_equal(theirs, ours_ranks[policy])
        ours = rank_family(ours_ranks[policy], candidates, HITS)
        for name, metric in pykeen_metrics().items():
            assert ours[name] == pytest.approx(metric(ranks=theirs, num_candidates=candidates), rel=RTOL, abs=ATOL)


def test_geometric_mean_rank_statistics_on_many_rankings_match_40_digits() -> None:
    """E[GMR] and V[GMR] of 20,000 rankings against mpmath: PyKEEN's prod - prod^2 drifts here, ours must not."""
    mpmath.mp.dps = 40
    rng = np.random.default_rng(11)
    size = 20_000
    candidates = rng.integers(1, 3000, size)
    ranks = np.floor(rng.random(size) ** 3 * candidates) + 1
    u = mpmath.mpf(1) / size
    first, second = [mpmath.mpf(0)], [mpmath.mpf(0)]
    for j in range(1, int(candidates.max()) + 1):  # running sums of j^u and j^2u
        first.append(first[-1] + mpmath.power(j, u))
        second.append(second[-1] + mpmath.power(j, 2 * u))
    counts = np.bincount(candidates)
    log_e1 = mpmath.fsum(int(c) * mpmath.log(first[n] / n) for n, c in enumerate(counts) if c)
    log_e2 = mpmath.fsum(int(c) * mpmath.log(second[n] / n) for n, c in enumerate(counts) if c)
    expected = mpmath.exp(log_e1)
    variance = mpmath.exp(log_e2) - expected ** 2
    gmr = mpmath.exp(mpmath.fsum(mpmath.log(int(r)) for r in ranks) / size)
    ours = rank_family(ranks, candidates, HITS)
    assert ours["AGMRI"] == pytest.approx(float((gmr - expected) / (1 - expected)), rel=1e-12)
    assert ours["zGMR"] == pytest.approx(float(-(gmr - expected) / mpmath.sqrt(variance)), rel=1e-12)
