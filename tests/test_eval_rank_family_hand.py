"""Rank family (evaluation.core.rank_family) on hand-computed cases, brute force, edge cases and input checks."""
from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from evaluation.core import micro
from evaluation.core.rank_family import added_names, family_names, per_ranking_weights, rank_family
from tests._raises_support import whole

# Three rankings: ranks (1, 2, 5) among N = (10, 4, 5) candidates.
RANKS, CANDIDATES = np.array([1.0, 2.0, 5.0]), np.array([10, 4, 5])


def harmonic(n: int, power: int = 1) -> Fraction:
    return sum((Fraction(1, j ** power) for j in range(1, n + 1)), Fraction(0))


def test_adjusted_arithmetic_mean_rank_three_queries() -> None:
    # MR = 8/3; E[MR] = mean((N+1)/2) = (11/2 + 5/2 + 3) / 3 = 11/3
    # AMR = 8/11; AMRI = (8/3 - 11/3) / (1 - 11/3) = 3/8
    # V[MR] = (99/12 + 15/12 + 24/12) / 9 = 23/18; zMR = (11/3 - 8/3) / sqrt(23/18) = sqrt(18/23)
    values = rank_family(RANKS, CANDIDATES)
    assert values["MR"] == pytest.approx(8 / 3, rel=1e-15)
    assert values["AMR"] == pytest.approx(8 / 11, rel=1e-15)
    assert values["AMRI"] == pytest.approx(3 / 8, rel=1e-15)
    assert values["zMR"] == pytest.approx(math.sqrt(18 / 23), rel=1e-15)


def test_adjusted_hits_at_one_three_queries() -> None:
    # Hits@1 = 1/3; p = (1/10, 1/4, 1/5), E = 11/60: AHits@1 = (1/3 - 11/60) / (49/60) = 9/49
    # V = (0.09 + 0.1875 + 0.16) / 9 = 7/144; zHits@1 = (9/60) / sqrt(7/144) = 1.8 / sqrt(7)
    values = rank_family(RANKS, CANDIDATES, hits=(1,))
    assert values["AHits@1"] == pytest.approx(9 / 49, rel=1e-14)
    assert values["zHits@1"] == pytest.approx(1.8 / math.sqrt(7), rel=1e-14)


def test_adjusted_mrr_exact_fractions() -> None:
    # E[1/r] = H(N)/N, V[1/r] = (N H_2(N) - H(N)^2) / N^2, mean over the three rankings
    mrr = (1 + Fraction(1, 2) + Fraction(1, 5)) / 3
    expected = sum(harmonic(n) / n for n in (10, 4, 5)) / 3
    variance = sum((n * harmonic(n, 2) - harmonic(n) ** 2) / n ** 2 for n in (10, 4, 5)) / 9
    values = rank_family(RANKS, CANDIDATES)
    assert values["MRR"] == pytest.approx(float(mrr), rel=1e-15)
    assert values["AMRR"] == pytest.approx(float((mrr - expected) / (1 - expected)), rel=1e-14)
    assert values["zMRR"] == pytest.approx(float(mrr - expected) / math.sqrt(variance), rel=1e-14)


def test_geometric_mean_rank_against_enumerating_every_rank_combination() -> None:
    # E and V of GMR = (r1 r2 r3)^(1/3) by enumerating all 10 * 4 * 5 equally likely rank triples
    outcomes = [(a * b * c) ** (1 / 3) for a, b, c in itertools.product(range(1, 11), range(1, 5), range(1, 6))]
    expected, variance = np.mean(outcomes), np.var(outcomes)
    gmr = 10 ** (1 / 3)
    values = rank_family(RANKS, CANDIDATES)
    assert values["GMR"] == pytest.approx(gmr, rel=1e-14) and values["IGMR"] == pytest.approx(1 / gmr, rel=1e-14)
    assert values["AGMRI"] == pytest.approx((gmr - expected) / (1 - expected), rel=1e-12)
    assert values["zGMR"] == pytest.approx(-(gmr - expected) / math.sqrt(variance), rel=1e-12)


def test_location_and_spread() -> None:
    # HMR = 3 / (1 + 1/2 + 1/5) = 30/17; median 2; |r - 2| = (1, 0, 3): MAD = 1 / 0.67449 (normal scale)
    # variance (population) = ((5/3)^2 + (2/3)^2 + (7/3)^2) / 3 = 26/9
    values = rank_family(RANKS, CANDIDATES)
    assert values["HMR"] == pytest.approx(30 / 17, rel=1e-15)
    assert values["MedR"] == 2.0
    assert values["RankMAD"] == pytest.approx(1 / 0.6744897501960817, rel=1e-15)
    assert values["RankVar"] == pytest.approx(26 / 9, rel=1e-15)
    assert values["RankStd"] == pytest.approx(math.sqrt(26 / 9), rel=1e-15)


def test_two_candidates_rank_one_is_one_on_every_index() -> None:
    # N = 2, rank 1: E[r] = 3/2 (AMR 2/3), V[r] = 1/4; E[1/r] = 3/4, V[1/r] = 1/16; p(Hits@1) = 1/2
    values = rank_family(np.array([1.0]), np.array([2]), hits=(1,))
    assert values["AMR"] == pytest.approx(2 / 3)
    for name in ("AMRI", "zMR", "AMRR", "zMRR", "AHits@1", "zHits@1", "AGMRI", "zGMR"):
        assert values[name] == pytest.approx(1.0, rel=1e-14), name


def test_nothing_random_gives_nan_indices() -> None:
    # every ranking has a single candidate: indices and z-scores are 0/0; AMR = 1 / 1
    values = rank_family(np.array([1.0, 1.0]), np.array([1, 1]), hits=(1, 3))
    assert values["AMR"] == 1.0 and values["MR"] == 1.0 and values["Hits@1"] == 1.0
    for name in ("AMRI", "zMR", "AMRR", "zMRR", "AGMRI", "zGMR", "AHits@1", "zHits@3"):
        assert math.isnan(values[name]), name
    # N <= k everywhere: only the Hits@k adjustments are undefined
    values = rank_family(np.array([2.0, 1.0]), np.array([3, 2]), hits=(1, 3))
    assert math.isnan(values["AHits@3"]) and math.isnan(values["zHits@3"])
    assert values["AHits@1"] == pytest.approx((0.5 - (1 / 3 + 1 / 2) / 2) / (1 - 5 / 12))


def test_no_rankings_gives_nan_everywhere() -> None:
    values = rank_family(np.zeros(0), np.zeros(0, dtype=np.int64))
    assert list(values) == family_names() and all(math.isnan(v) for v in values.values())


def test_per_relation_weights_reproduce_micro_reweighted() -> None:
    rng = np.random.default_rng(5)
    relation = rng.integers(0, 4, 50)
    candidates = rng.integers(1, 100, 50)
    ranks = np.floor(rng.random(50) * candidates) + 1
    relation_weights = np.array([0.5, 0.0, 0.2, 0.3])
    weights = per_ranking_weights(relation, relation_weights)
    family = rank_family(ranks, candidates, (1, 10), weights)
    plain = micro.reweighted(ranks, relation, relation_weights, (1, 10))
    for name, value in plain.items():
        assert family[name] == pytest.approx(value, rel=1e-13), name
    # weight 0 (relation 1) is the same as leaving those rankings out
    kept = relation != 1
    assert rank_family(ranks[kept], candidates[kept], (1, 10), weights[kept]) == pytest.approx(family, rel=1e-13)
    with pytest.raises(ValueError, match="weight but no ranking"):
        per_ranking_weights(relation[relation != 2], relation_weights)


def test_added_names_are_the_family_beyond_micro() -> None:
    assert added_names((1, 10))[:2] == ["AMR", "AMRI"]
    assert family_names((1, 10)) == micro.metric_names((1, 10)) + added_names((1, 10))


@pytest.mark.parametrize(("ranks", "candidates", "message"), [
    ([0.5], [3], "every rank must satisfy 1 <= rank <= num_candidates"),
    ([4.0], [3], "every rank must satisfy 1 <= rank <= num_candidates"),
    ([np.nan], [3], "every rank must satisfy 1 <= rank <= num_candidates"),
    ([1.0], [0], "num_candidates must be integers >= 1"), ([1.0], [2.5], "num_candidates must be integers >= 1"),
    ([1.0, 2.0], [3], "ranks and num_candidates must have the same length"),
])
def test_bad_inputs_are_rejected(ranks, candidates, message) -> None:
    with pytest.raises(ValueError, match=whole(message)):
        rank_family(np.array(ranks), np.array(candidates))


def test_bad_weights_and_hits_are_rejected() -> None:
    with pytest.raises(ValueError, match=whole("weights must be finite, non-negative, with a positive sum")):
        rank_family(RANKS, CANDIDATES, weights=np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=whole("weights must be finite, non-negative, with a positive sum")):
        rank_family(RANKS, CANDIDATES, weights=np.zeros(3))
    with pytest.raises(ValueError, match=whole("weights must have one value per ranking")):
        rank_family(RANKS, CANDIDATES, weights=np.ones(2))
    for hits in ((0,), (2.5,)):
        with pytest.raises(ValueError, match=whole("hits cut-offs must be integers >= 1")):
            rank_family(RANKS, CANDIDATES, hits=hits)


def test_weighted_median_on_exactly_half_is_the_mean_of_the_two() -> None:
    # weights 1/4, 1/4, 1/2 on ranks 1, 2, 3: the cumulative weight is exactly 1/2 at rank 2 -> (2 + 3) / 2;
    # |r - 2.5| = 1.5, 0.5, 0.5 with weights 1/4, 1/4, 1/2: cumulative 1/4 + 1/2 = 3/4 passes 1/2 at 0.5
    values = rank_family(np.array([1.0, 2.0, 3.0]), np.array([5, 5, 5]), weights=np.array([1.0, 1.0, 2.0]))
    assert values["MedR"] == 2.5
    assert values["RankMAD"] == pytest.approx(0.5 / 0.6744897501960817)
    # equal weights on 1, 2, 3, 4: exactly 1/2 at 2 -> (2 + 3) / 2, the unweighted (numpy) median too
    equal = rank_family(np.array([4.0, 1.0, 3.0, 2.0]), np.full(4, 10), weights=np.ones(4))
    assert equal["MedR"] == 2.5 == rank_family(np.array([4.0, 1.0, 3.0, 2.0]), np.full(4, 10))["MedR"]
    # weights 1/8, 1/8, 1/4, 1/2 on 1, 2, 3, 4: cumulative 1/8, 1/4, 1/2 -> exactly half at 3 -> (3 + 4) / 2
    assert rank_family(np.array([1.0, 2.0, 3.0, 4.0]), np.full(4, 10),
                       weights=np.array([1.0, 1.0, 2.0, 4.0]))["MedR"] == 3.5


def test_per_ranking_weights_hand_case_and_checks() -> None:
    # relation weights 1/2, 1/4, 0 (normalised: 2/3, 1/3, 0); relation 0 has 2 rankings, 1 and 2 one each:
    # each ranking of relation 0 gets 2/3 / 2, relation 1's gets 1/3, relation 2's (weight 0) gets 0
    weights = per_ranking_weights(np.array([0, 0, 1, 2]), np.array([0.5, 0.25, 0.0]))
    assert weights == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0])
    bad_weights = whole("weights must be finite, non-negative, with a positive sum")
    for relation_weights in ([1.0, -0.5], [0.0, 0.0], [1.0, np.inf], [np.nan, 1.0]):
        with pytest.raises(ValueError, match=bad_weights):
            per_ranking_weights(np.array([0, 1]), np.array(relation_weights))
    for relation in ([0, 2], [-1, 1]):  # 2 = len(weights): no weight; -1: no relation
        with pytest.raises(ValueError, match=whole("a ranking has a relation id without a weight")):
            per_ranking_weights(np.array(relation), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match=whole("relations [1, 2, 3, 4, 5] have weight but no ranking")):
        per_ranking_weights(np.array([0, 0]), np.ones(8))  # the message names the first five
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a weight-0 relation without ranking is fine, and not divided by 0
        assert per_ranking_weights(np.array([0, 0]), np.array([1.0, 0.0])).tolist() == [0.5, 0.5]


def test_one_ranking_in_the_middle_is_exactly_random() -> None:
    # rank 2 of N = 3: E[r] = 2, so every rank index is 0; GMR = 2 = E[r^1] too (one ranking, weight 1)
    values = rank_family(np.array([2.0]), np.array([3]))
    assert values["MR"] == values["GMR"] == values["MedR"] == 2.0 and values["AMR"] == 1.0
    assert values["AMRI"] == pytest.approx(0.0, abs=1e-15) and values["AGMRI"] == pytest.approx(0.0, abs=1e-15)
    assert values["zMR"] == pytest.approx(0.0, abs=1e-15) and values["zGMR"] == pytest.approx(0.0, abs=1e-12)
