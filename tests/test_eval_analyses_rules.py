"""SPEC 5.5 analyses (evaluation.core.analyses), the rules the other analysis tests leave open (issue 19, mutation
testing): every refusal's message whole, the defaults, subset sizes at their bounds and roundings, undefined
taus (NaN, without a warning), the paired t-test by hand (a Cauchy p-value), the bootstrap against the exact
bootstrap distribution enumerated over every resample, chunk sizes that must not change a result, the
open-world drop counts, AnswerRankShift by hand."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from evaluation.core import analyses
from evaluation.core.analyses import (
    DEFAULT_SUBSET_FRACTIONS,
    AnswerRankShift,
    _bootstrap_counts,
    _random_subset_matrix,
    data_sensitivity,
    discriminative_power,
    open_world_simulation,
    paired_bootstrap_pvalues,
    paired_t_test_pvalues,
    pooling_depth_curve,
    system_pairs,
)
from tests._raises_support import whole


def test_public_names_and_default_fractions() -> None:
    assert sorted(analyses.__all__) == sorted([
        "DEFAULT_SUBSET_FRACTIONS", "pooling_depth_curve", "DataSensitivityResult", "data_sensitivity",
        "system_pairs", "paired_t_test_pvalues", "paired_bootstrap_pvalues", "DiscriminativePowerResult",
        "discriminative_power", "OpenWorldResult", "open_world_simulation", "AnswerRankShift"])
    # 20 sizes from 1% to 95% in equal steps of 0.94 / 19, rounded to 4 decimals
    assert len(DEFAULT_SUBSET_FRACTIONS) == 20 and DEFAULT_SUBSET_FRACTIONS[:3] == (0.01, 0.0595, 0.1089)
    assert DEFAULT_SUBSET_FRACTIONS[-1] == 0.95
    assert all(abs(f - (0.01 + i * 0.94 / 19)) <= 0.00005 for i, f in enumerate(DEFAULT_SUBSET_FRACTIONS))


def test_shape_refusals() -> None:
    message = "per_query must be (systems, queries) or (systems, metrics, queries), got {}"
    for bad in (np.zeros(3), np.zeros((2, 2, 2, 2))):
        for function in (data_sensitivity, paired_t_test_pvalues, paired_bootstrap_pvalues, discriminative_power):
            with pytest.raises(ValueError, match=whole(message.format(bad.shape))):
                function(bad)
    with pytest.raises(ValueError, match=whole("depths is required when depth_scores is a callable")):
        pooling_depth_curve(np.array([1.0, 2.0]), lambda depth: np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=whole("depths and depth_scores disagree on the number of depths")):
        pooling_depth_curve(np.array([1.0, 2.0]), np.array([[1.0, 2.0], [2.0, 1.0]]), depths=[0, 1, 2])
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=whole("per_query scores must be finite")):
            data_sensitivity(np.array([[1.0, bad], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=whole("the paired t-test needs at least 2 queries")):
        paired_t_test_pvalues(np.ones((3, 1)))
    with pytest.raises(ValueError, match=whole("the bootstrap test needs at least 2 queries")):
        paired_bootstrap_pvalues(np.ones((3, 1)))
    with pytest.raises(ValueError, match=whole("unknown test 'z': use 't' or 'bootstrap'")):
        discriminative_power(np.ones((3, 4)), test="z")


def test_pooling_depth_curve_with_depths_given() -> None:
    sparse = np.array([1.0, 2.0, 3.0])
    completed = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    assert pooling_depth_curve(sparse, completed, depths=[0, 5]).tolist() == [1.0, -1.0]
    calls = []

    def at_depth(depth: int) -> np.ndarray:
        calls.append(depth)
        return completed[depth // 5]

    assert pooling_depth_curve(sparse, at_depth, depths=[5, 0, 5]).tolist() == [-1.0, 1.0, -1.0]
    assert calls == [5, 0, 5]
    # one metric as a column: (depths, 1)
    assert pooling_depth_curve(sparse[:, None], completed[:, :, None]).shape == (2, 1)


def test_subset_sizes_round_and_clip() -> None:
    rng = np.random.default_rng(0)
    per_query = rng.random((4, 10)) + np.arange(4)[:, None] * 0.3
    result = data_sensitivity(per_query, fractions=(0.0, 0.05, 0.25, 0.35, 0.5, 1.0, 2.0), n_draws=3, seed=1)
    # rint: 0 -> 0 -> at least 1; 0.5 -> 0 -> 1 (halves to even); 2.5 -> 2; 3.5 -> 4; 5; 10; 20 -> at most 10
    assert result.subset_sizes.tolist() == [1, 1, 2, 4, 5, 10, 10]
    assert result.fractions.tolist() == [0.0, 0.05, 0.25, 0.35, 0.5, 1.0, 2.0]
    assert result.taus.shape == (7, 3) and result.mean_tau.shape == (7,) and result.std_tau.shape == (7,)
    assert result.taus[-2:].tolist() == [[1.0] * 3] * 2  # the whole set: the reference ranking itself
    assert result.std_tau[-1] == 0.0
    with pytest.raises(AttributeError):
        result.taus = None  # frozen


def test_data_sensitivity_defaults() -> None:
    rng = np.random.default_rng(3)
    per_query = rng.random((3, 2, 60))
    result = data_sensitivity(per_query)
    assert result.taus.shape == (20, 50, 2) and result.mean_tau.shape == (20, 2)
    assert result.fractions.tolist() == list(DEFAULT_SUBSET_FRACTIONS)
    assert result.subset_sizes[0] == 1 and result.subset_sizes[-1] == 57  # rint(0.6) = 1, rint(57.0)
    np.testing.assert_array_equal(result.taus, data_sensitivity(per_query, seed=0).taus)
    np.testing.assert_array_equal(result.taus, data_sensitivity(per_query, seed=np.random.default_rng(0)).taus)


def test_undefined_taus_are_left_out_of_the_mean_without_a_warning() -> None:
    # two systems, two queries: the subset {q0} ranks them (tau 1), {q1} ties them (tau undefined)
    per_query = np.array([[1.0, 0.0], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = data_sensitivity(per_query, fractions=(0.5,), n_draws=40, seed=2)
        taus = result.taus[0]
        assert np.isnan(taus).sum() > 0 and (taus == 1.0).sum() > 0 and np.isnan(taus).sum() + (taus == 1).sum() == 40
        assert result.mean_tau.tolist() == [1.0] and result.std_tau.tolist() == [0.0]
        constant = data_sensitivity(np.ones((3, 5)), fractions=(0.4, 1.0), n_draws=4, seed=0)
        assert np.isnan(constant.taus).all() and np.isnan(constant.mean_tau).all() and np.isnan(constant.std_tau).all()
        shift = AnswerRankShift(np.ones((2, 3)), np.zeros((2, 3)), np.array([0, 1, 2]))
        world = open_world_simulation(lambda kept: np.ones(2), 3, drop_fractions=(0.0,), n_repeats=2)
        assert np.isnan(world.taus).all() and np.isnan(world.mean_tau).all()
        assert shift.shifted_ranks(np.array([True, False, True])).tolist() == [[1, 1, 1], [1, 1, 1]]


def test_random_subsets() -> None:
    rng = np.random.default_rng(4)
    for size in (1, 3, 7):
        selection = _random_subset_matrix(rng, 500, 7, size)
        assert selection.shape == (500, 7) and set(np.unique(selection).tolist()) <= {0.0, 1.0}
        assert np.all(selection.sum(axis=1) == size)
        if size < 7:  # every query is chosen in about size / 7 of the draws
            assert np.all(np.abs(selection.mean(axis=0) - size / 7) < 0.1)


def test_system_pairs() -> None:
    assert system_pairs(4).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert system_pairs(1).shape == (0, 2) and system_pairs(2).tolist() == [[0, 1]]


def test_paired_t_test_by_hand() -> None:
    # pair (0, 1): differences 1, 3 -> t = 2 / (sqrt(2) / sqrt(2)) = 2 with 1 degree of freedom (Cauchy):
    # p = 1 - 2 atan(2) / pi. Pairs (0, 2), (0, 3): differences 2, 2 -> zero variance, mean 2: p = 0.
    # Pairs (1, 2), (1, 3): differences 1, -1 -> mean 0: t = 0, p = 1. Pair (2, 3): identical: p = 1.
    per_query = np.array([[1.0, 3.0], [0.0, 0.0], [-1.0, 1.0], [-1.0, 1.0]])
    cauchy = 1 - 2 * math.atan(2) / math.pi
    expected = [cauchy, 0.0, 0.0, 1.0, 1.0, 1.0]  # pairs 01 02 03 12 13 23
    for chunk in (1, 2, 4, 256):
        pairs, pvalues = paired_t_test_pvalues(per_query, pair_chunk=chunk)
        assert pairs.tolist() == system_pairs(4).tolist()
        assert pvalues == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # a second metric with every score negated: the same p-values
    pairs, pvalues = paired_t_test_pvalues(np.stack([per_query, -per_query], axis=1))
    assert pvalues.shape == (6, 2) and pvalues[:, 1] == pytest.approx(expected, rel=1e-12, abs=1e-15)


def exact_bootstrap_p(z: np.ndarray) -> float:
    """Sakai's p over every ordered resample of the null sample w = z - mean(z) (all equally likely)."""
    n = len(z)
    observed = abs(z.mean() / (z.std(ddof=1) / math.sqrt(n)))
    w = z - z.mean()
    exceed = 0
    for picks in itertools.product(range(n), repeat=n):
        sample = w[list(picks)]
        sd = sample.std(ddof=1)
        t = abs(sample.mean()) / (sd / math.sqrt(n)) if sd > 1e-12 else (math.inf if abs(sample.mean()) > 1e-12 else 0)
        exceed += t >= observed - 1e-9
    return exceed / n ** n


def test_bootstrap_against_the_exact_bootstrap_distribution() -> None:
    per_query = np.array([[0.9, 0.1, 0.5, 0.8, 0.3], [0.2, 0.3, 0.1, 0.4, 0.1], [0.5, 0.5, 0.5, 0.5, 0.5]])
    pairs, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=20000, seed=1)
    assert pairs.tolist() == [[0, 1], [0, 2], [1, 2]]
    for (i, j), p in zip(pairs, pvalues):
        exact = exact_bootstrap_p(per_query[i] - per_query[j])
        assert abs(p - exact) < 0.015, (i, j, p, exact)  # 20000 resamples: sd below 0.0036


def test_bootstrap_edges_and_chunks() -> None:
    # identical systems: p = 1; a constant non-zero difference: no resample of w = 0 reaches |t| = inf: p = 0
    per_query = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 1.0, 2.0]])
    pairs, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=50, seed=0)
    assert pvalues.tolist() == [1.0, 0.0, 0.0]
    rng = np.random.default_rng(5)
    per_query = rng.random((4, 2, 30))
    _, reference = paired_bootstrap_pvalues(per_query, n_bootstrap=203, seed=7)
    assert reference.shape == (6, 2)
    for sample_chunk, pair_chunk in ((1, 1), (7, 2), (203, 5), (500, 128)):
        _, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=203, seed=7, sample_chunk=sample_chunk,
                                              pair_chunk=pair_chunk)
        np.testing.assert_array_equal(pvalues, reference)
    _, again = paired_bootstrap_pvalues(per_query, n_bootstrap=203, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(again, reference)
    # the default: 1000 resamples, seed 0 -> p-values are multiples of 1 / 1000
    _, default = paired_bootstrap_pvalues(per_query[:, 0])
    np.testing.assert_array_equal(default, paired_bootstrap_pvalues(per_query[:, 0], n_bootstrap=1000, seed=0)[1])
    assert default.shape == (6,) and np.allclose(default * 1000, np.round(default * 1000))


def test_bootstrap_counts_in_row_chunks() -> None:
    # 400,001 queries: 2,000,000 // 400,001 = 4 rows per chunk, so 10 resamples come in chunks of 4, 4, 2
    counts = _bootstrap_counts(np.random.default_rng(0), 10, 400_001)
    assert counts.shape == (10, 400_001) and counts.dtype == np.uint16
    assert np.all(counts.sum(axis=1, dtype=np.int64) == 400_001)
    assert len({row.tobytes() for row in counts}) == 10  # no chunk repeats or skips rows
    small = _bootstrap_counts(np.random.default_rng(0), 6, 3)
    assert small.shape == (6, 3) and np.all(small.sum(axis=1) == 3)


def test_discriminative_power_fields() -> None:
    per_query = np.array([[1.0, 3.0], [0.0, 0.0], [-1.0, 1.0], [-1.0, 1.0]])
    cauchy = 1 - 2 * math.atan(2) / math.pi
    result = discriminative_power(per_query, significance_level=0.3)
    # p-values (test_paired_t_test_by_hand): cauchy ~ 0.295, 0, 0, 1, 1, 1
    assert result.sorted_pvalues == pytest.approx([1.0, 1.0, 1.0, cauchy, 0.0, 0.0])
    assert result.auc == pytest.approx((3 + cauchy) / 6) and isinstance(result.auc, float)
    assert result.significant_fraction == pytest.approx(3 / 6) and isinstance(result.significant_fraction, float)
    assert result.significance_level == 0.3 and result.pairs.tolist() == system_pairs(4).tolist()
    assert discriminative_power(per_query).significant_fraction == pytest.approx(2 / 6)  # default level 0.05
    assert discriminative_power(per_query).significance_level == 0.05
    assert discriminative_power(per_query, significance_level=0.29).significant_fraction == pytest.approx(2 / 6)
    # strictly below the level: the two p = 0 pairs are not significant at level 0, nothing is at p = 1 exactly
    assert discriminative_power(per_query, significance_level=0.0).significant_fraction == 0.0
    assert discriminative_power(per_query, significance_level=1.0).significant_fraction == pytest.approx(3 / 6)
    # a second metric with the systems in reverse order: the same p-values, other pairs
    both = discriminative_power(np.stack([per_query, per_query[::-1]], axis=1))
    assert both.pvalues[:, 1] == pytest.approx([1.0, 1.0, 0.0, 1.0, 0.0, cauchy])
    assert both.sorted_pvalues.shape == (6, 2) and both.auc == pytest.approx([(3 + cauchy) / 6] * 2)
    assert both.sorted_pvalues[:, 1] == pytest.approx([1.0, 1.0, 1.0, cauchy, 0.0, 0.0])
    assert both.significant_fraction == pytest.approx([2 / 6, 2 / 6])
    boot = discriminative_power(per_query, test="bootstrap", n_bootstrap=40, seed=3)
    assert boot.pvalues.tolist() == paired_bootstrap_pvalues(per_query, n_bootstrap=40, seed=3)[1].tolist()
    default_boot = discriminative_power(per_query, test="bootstrap")
    assert default_boot.pvalues.tolist() == paired_bootstrap_pvalues(per_query, n_bootstrap=1000, seed=0)[1].tolist()


def test_open_world_drop_counts_and_defaults() -> None:
    seen = []

    def metric_fn(kept: np.ndarray) -> np.ndarray:
        seen.append(int((~kept).sum()))
        return np.array([1.0, 2.0, 3.0]) + 0.0 * kept.sum()

    result = open_world_simulation(metric_fn, 10, drop_fractions=(0.25, 0.35, 1.0), n_repeats=2, seed=0)
    # rint: 2.5 -> 2 (halves to even), 3.5 -> 4, all 10
    assert seen == [0, 2, 2, 4, 4, 10, 10]
    assert result.taus.tolist() == [[1.0, 1.0]] * 3 and result.mean_tau.tolist() == [1.0] * 3
    assert result.drop_fractions.tolist() == [0.25, 0.35, 1.0] and result.closed_world_scores.tolist() == [1, 2, 3]
    seen.clear()
    default = open_world_simulation(metric_fn, 20)
    assert seen == [0] + [0] * 10 + [2] * 10 + [4] * 10 + [6] * 10 + [8] * 10 + [10] * 10
    assert default.taus.shape == (6, 10) and default.drop_fractions.tolist() == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    # several metrics: taus per metric; the second one reverses when anything is dropped
    both = open_world_simulation(lambda kept: np.array([[1.0, 1.0], [2.0, 2.0 * (1 if kept.all() else -1)]]), 4,
                                 drop_fractions=(0.0, 0.5), n_repeats=3, seed=1)
    assert both.taus.shape == (2, 3, 2) and both.taus[1].tolist() == [[1.0, -1.0]] * 3
    assert both.mean_tau.tolist() == [[1.0, 1.0], [1.0, -1.0]]


def test_answer_rank_shift_by_hand() -> None:
    # answers a0, a2, a3 belong to question 0, a1 to question 1; two systems
    scores = np.array([[3.0, 9.0, 1.0, 1.0], [1.0, 9.0, 2.0, 3.0]])
    ranks = np.array([[1.0, 1.0, 2.0, 2.0], [3.0, 1.0, 2.0, 1.0]])
    shift = AnswerRankShift(ranks, scores, np.array([0, 1, 0, 0]))
    assert shift.shifted_ranks(np.ones(4, bool)).tolist() == ranks.tolist()
    # a0 dropped: system 0 scores it 3, above a2 and a3 (1): both down 1; system 1 scores it 1, below both
    assert shift.shifted_ranks(np.array([False, True, True, True])).tolist() == [[1, 1, 3, 3], [3, 1, 2, 1]]
    # a3 dropped: system 0: a0 (3) above it, a2 ties it (+1/2); system 1: a3 (3) above a0 (1) and a2 (2)
    assert shift.shifted_ranks(np.array([True, True, True, False])).tolist() == [[1, 1, 2.5, 2], [4, 1, 3, 1]]
    # a0 and a3 dropped: a2 gets both shifts; a1 (another question) none
    assert shift.shifted_ranks(np.array([False, True, True, False]))[:, 1:3].tolist() == [[1, 3.5], [1, 3]]
    mrr = shift.micro_metric_fn()(np.array([False, True, True, False]))
    assert mrr == pytest.approx([(1 + 1 / 3.5) / 2, (1 + 1 / 3) / 2])
    hits = shift.micro_metric_fn(lambda r: (r <= 2).astype(float))(np.array([False, True, True, False]))
    assert hits.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match=whole(
            "ranks, answer_scores and question_of_answer disagree on the number of answers")):
        AnswerRankShift(ranks[:, :3], scores, np.array([0, 1, 0, 0]))
    with pytest.raises(ValueError, match=whole(
            "ranks, answer_scores and question_of_answer disagree on the number of answers")):
        AnswerRankShift(ranks, scores, np.array([0, 1, 0]))
