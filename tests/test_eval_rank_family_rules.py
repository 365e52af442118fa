"""Rank family (evaluation.core.rank_family), the weighted paths on hand-computed cases (issue 19): rankings of
weight 0 left out (not kept at weight 0), weights normalised to sum 1, the geometric mean rank's expectation and
variance per distinct weight, the weighted population variance."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evaluation.core.rank_family import rank_family

# Three rankings: ranks (1, 2, 5) among N = (10, 4, 5) candidates.
RANKS, CANDIDATES = np.array([1.0, 2.0, 5.0]), np.array([10, 4, 5])


def test_a_ranking_of_weight_zero_is_left_out_not_kept_at_weight_zero() -> None:
    # weights 1, 0, 1 on ranks 1, 2, 3: the rankings 1 and 3 at 1/2 each -> exactly half at 1 -> median (1 + 3) / 2
    # (kept at weight 0, rank 2 would sit between them: (1 + 2) / 2)
    values = rank_family(np.array([1.0, 2.0, 3.0]), np.array([5, 5, 5]), weights=np.array([1.0, 0.0, 1.0]))
    assert values["MedR"] == 2.0 and values["MR"] == 2.0
    # |r - 2| = 1, 1: MAD 1
    assert values["RankMAD"] == pytest.approx(1 / 0.6744897501960817, rel=1e-15)
    # the one ranking left has N = 1: nothing is random, the indices are NaN (a weight-0 ranking with N = 5 does
    # not make them defined)
    values = rank_family(np.array([1.0, 3.0]), np.array([1, 5]), hits=(1,), weights=np.array([1.0, 0.0]))
    assert values["MR"] == 1.0 and values["AMR"] == 1.0
    for name in ("AMRI", "zMR", "AMRR", "zMRR", "AGMRI", "zGMR", "AHits@1", "zHits@1"):
        assert math.isnan(values[name]), name


def test_weights_are_normalised() -> None:
    # weights 2, 2, 4 = 1/4, 1/4, 1/2: MR = 1/4 + 2/4 + 5/2 = 13/4; Hits@1 = 1/4; MRR = 1/4 + 1/8 + 1/10 = 19/40
    values = rank_family(RANKS, CANDIDATES, hits=(1,), weights=np.array([2.0, 2.0, 4.0]))
    assert values["MR"] == pytest.approx(13 / 4, rel=1e-15)
    assert values["MRR"] == pytest.approx(19 / 40, rel=1e-15)
    assert values["Hits@1"] == pytest.approx(1 / 4, rel=1e-15)
    # E[MR] = 1/4 11/2 + 1/4 5/2 + 1/2 3 = 7/2: AMR = 13/14
    assert values["AMR"] == pytest.approx(13 / 14, rel=1e-15)
    assert values == pytest.approx(rank_family(RANKS, CANDIDATES, hits=(1,), weights=np.array([0.25, 0.25, 0.5])),
                                   rel=1e-14)


def random_gmr_moments(exponents: tuple[float, float, float]) -> tuple[float, float]:
    """E and V of a ** e1 * b ** e2 * c ** e3 over all 10 * 4 * 5 equally likely rank triples (a, b, c)."""
    outcomes = [a ** exponents[0] * b ** exponents[1] * c ** exponents[2]
                for a, b, c in itertools.product(range(1, 11), range(1, 5), range(1, 6))]
    return np.mean(outcomes), np.var(outcomes)


def test_weighted_geometric_mean_rank_against_enumerating_every_rank_combination() -> None:
    # three distinct weights 1/2, 1/3, 1/6: GMR = 1^(1/2) 2^(1/3) 5^(1/6); its E and V over every rank triple
    weights = np.array([3.0, 2.0, 1.0]) / 6
    expected, variance = random_gmr_moments((1 / 2, 1 / 3, 1 / 6))
    gmr = 2 ** (1 / 3) * 5 ** (1 / 6)
    values = rank_family(RANKS, CANDIDATES, weights=weights)
    assert values["GMR"] == pytest.approx(gmr, rel=1e-14) and values["IGMR"] == pytest.approx(1 / gmr, rel=1e-14)
    assert values["AGMRI"] == pytest.approx((gmr - expected) / (1 - expected), rel=1e-12)
    assert values["zGMR"] == pytest.approx(-(gmr - expected) / math.sqrt(variance), rel=1e-12)
    # two rankings share a weight (one group of two, one of one): the same sums regrouped
    weights = np.array([1.0, 2.0, 1.0]) / 4
    expected, variance = random_gmr_moments((1 / 4, 1 / 2, 1 / 4))
    gmr = 2 ** (1 / 2) * 5 ** (1 / 4)
    values = rank_family(RANKS, CANDIDATES, weights=weights)
    assert values["AGMRI"] == pytest.approx((gmr - expected) / (1 - expected), rel=1e-12)
    assert values["zGMR"] == pytest.approx(-(gmr - expected) / math.sqrt(variance), rel=1e-12)


def test_weighted_spread() -> None:
    # weights 1/4, 1/4, 1/2 on ranks 1, 2, 3: MR = 9/4; variance 1/4 (5/4)^2 + 1/4 (1/4)^2 + 1/2 (3/4)^2 = 11/16
    values = rank_family(np.array([1.0, 2.0, 3.0]), np.array([5, 5, 5]), weights=np.array([1.0, 1.0, 2.0]))
    assert values["MR"] == pytest.approx(9 / 4, rel=1e-15)
    assert values["RankVar"] == pytest.approx(11 / 16, rel=1e-15)
    assert values["RankStd"] == pytest.approx(math.sqrt(11) / 4, rel=1e-15)
    # HMR = 1 / MRR = 1 / (1/4 + 1/8 + 1/6) = 24/13
    assert values["HMR"] == pytest.approx(24 / 13, rel=1e-15)
