"""SPEC 5.5 analyses: pooling-depth curve, data sensitivity, discriminative power, open-world simulation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluation.core.analyses import (
    DEFAULT_SUBSET_FRACTIONS,
    AnswerRankShift,
    _random_subset_matrix,
    data_sensitivity,
    discriminative_power,
    open_world_simulation,
    paired_bootstrap_pvalues,
    paired_t_test_pvalues,
    pooling_depth_curve,
    system_pairs,
)

# ------------------------------------------------------------------------------------------- pooling depth


def test_pooling_depth_curve_from_array_and_callable() -> None:
    sparse = np.array([[0.1, 5.0], [0.2, 4.0], [0.3, 3.0]])  # 3 systems x 2 metrics
    depth_scores = np.stack([
        sparse,  # depth 0 = sparse labels: tau 1
        np.array([[0.3, 5.0], [0.2, 4.0], [0.1, 3.0]]),  # metric 0 reversed -> -1, metric 1 unchanged
        np.array([[0.1, 4.0], [0.3, 4.0], [0.2, 3.0]]),  # metric 0: pairs C, C, D -> 1/3
    ])
    # metric 1 at depth 2 vs [5, 4, 3]: (0,1) tied, (0,2) C, (1,2) C -> 2 / sqrt(3 * 2)
    expected = np.array([[1.0, 1.0], [-1.0, 1.0], [1 / 3, 2 / np.sqrt(6)]])
    assert pooling_depth_curve(sparse, depth_scores) == pytest.approx(expected)
    from_callable = pooling_depth_curve(sparse, lambda depth: depth_scores[depth], depths=range(3))
    assert from_callable == pytest.approx(expected)
    assert pooling_depth_curve(sparse[:, 0], depth_scores[:, :, 0]) == pytest.approx(expected[:, 0])


# ------------------------------------------------------------------------------------------- data sensitivity


def test_default_subset_fractions() -> None:
    assert len(DEFAULT_SUBSET_FRACTIONS) == 20
    assert DEFAULT_SUBSET_FRACTIONS[0] == pytest.approx(0.01)
    assert DEFAULT_SUBSET_FRACTIONS[-1] == pytest.approx(0.95)


def test_data_sensitivity_dominating_systems_keep_tau_one_at_every_size() -> None:
    rng = np.random.default_rng(0)
    n_systems, n_queries = 6, 500
    base = rng.random(n_queries)
    # system s beats system s-1 on every single query, for both metrics
    per_query = np.stack([base + 0.01 * s for s in range(n_systems)])
    per_query = np.stack([per_query, 1 - per_query], axis=1)  # metric 2: reversed but consistent
    result = data_sensitivity(per_query, n_draws=20, seed=1)
    assert result.taus.shape == (20, 20, 2)
    assert np.all(result.taus == pytest.approx(1.0))
    assert result.mean_tau == pytest.approx(np.ones((20, 2)))
    assert result.subset_sizes[0] == 5 and result.subset_sizes[-1] == 475


def test_data_sensitivity_is_seeded_and_grows_with_size() -> None:
    rng = np.random.default_rng(1)
    per_query = rng.random((8, 2000)) + np.linspace(0, 0.05, 8)[:, None]
    first = data_sensitivity(per_query, fractions=(0.01, 0.1, 0.5, 1.0), n_draws=30, seed=42)
    again = data_sensitivity(per_query, fractions=(0.01, 0.1, 0.5, 1.0), n_draws=30, seed=42)
    other = data_sensitivity(per_query, fractions=(0.01, 0.1, 0.5, 1.0), n_draws=30, seed=43)
    np.testing.assert_array_equal(first.taus, again.taus)
    assert not np.array_equal(first.taus, other.taus)
    assert first.taus.shape == (4, 30)  # (S, Q) input: no metric axis
    assert first.mean_tau[-1] == pytest.approx(1.0)  # the full set is the reference ranking
    assert first.mean_tau[0] < first.mean_tau[1] < first.mean_tau[2] <= 1.0


def test_data_sensitivity_matches_scipy_on_the_same_subsets() -> None:
    # Replay the subsets with the same seeded Generator and rank them with plain numpy means + scipy.
    rng = np.random.default_rng(5)
    hits = rng.integers(0, 2, size=(6, 1, 40)).astype(float)  # Hits-like: many tied subset means
    continuous = rng.random((6, 1, 40))
    per_query = np.concatenate([hits, continuous], axis=1)  # (systems, metrics, queries)
    fractions = (0.1, 0.3, 0.7)
    result = data_sensitivity(per_query, fractions=fractions, n_draws=15, seed=3)
    replay = np.random.default_rng(3)
    for index, fraction in enumerate(fractions):
        size = int(round(fraction * 40))
        selection = _random_subset_matrix(replay, 15, 40, size).astype(bool)
        assert np.all(selection.sum(axis=1) == size)
        for draw in range(15):
            for metric in range(2):
                subset_means = per_query[:, metric, selection[draw]].mean(axis=1)
                expected = stats.kendalltau(subset_means, per_query[:, metric].mean(axis=1)).statistic
                got = result.taus[index, draw, metric]
                assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected)


# ------------------------------------------------------------------------------------------- discriminative power


def test_paired_t_test_matches_scipy_for_every_pair() -> None:
    rng = np.random.default_rng(2)
    per_query = rng.random((5, 300)) + np.array([0.0, 0.01, 0.05, 0.2, 0.0])[:, None]
    pairs, pvalues = paired_t_test_pvalues(per_query)
    np.testing.assert_array_equal(pairs, system_pairs(5))
    expected = [stats.ttest_rel(per_query[i], per_query[j]).pvalue for i, j in pairs]
    assert pvalues == pytest.approx(np.array(expected), rel=1e-9)


def test_paired_t_test_multi_metric_shape_and_identical_systems() -> None:
    rng = np.random.default_rng(3)
    per_query = rng.random((4, 2, 50))
    per_query[3] = per_query[0]  # identical systems: scipy gives NaN, we give p = 1
    pairs, pvalues = paired_t_test_pvalues(per_query)
    assert pvalues.shape == (6, 2)
    identical = [k for k, (i, j) in enumerate(pairs) if (i, j) == (0, 3)][0]
    assert pvalues[identical] == pytest.approx([1.0, 1.0])
    expected = stats.ttest_rel(per_query[1, 1], per_query[2, 1]).pvalue
    row = [k for k, (i, j) in enumerate(pairs) if (i, j) == (1, 2)][0]
    assert pvalues[row, 1] == pytest.approx(expected)


def test_discriminative_power_sorted_curve_and_area() -> None:
    rng = np.random.default_rng(4)
    per_query = rng.random((4, 200)) + np.array([0.0, 0.02, 0.1, 0.3])[:, None]
    result = discriminative_power(per_query)
    expected = np.array([stats.ttest_rel(per_query[i], per_query[j]).pvalue for i, j in system_pairs(4)])
    assert result.sorted_pvalues == pytest.approx(np.sort(expected)[::-1])
    assert result.auc == pytest.approx(expected.mean())  # area with x normalised to [0, 1]
    assert result.significant_fraction == pytest.approx(np.mean(expected < 0.05))


def test_paired_bootstrap_agrees_with_a_naive_bootstrap_and_is_seeded() -> None:
    rng = np.random.default_rng(6)
    per_query = rng.random((3, 400)) + np.array([0.0, 0.03, 0.5])[:, None]
    pairs, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=2000, seed=9)
    _, again = paired_bootstrap_pvalues(per_query, n_bootstrap=2000, seed=9)
    np.testing.assert_array_equal(pvalues, again)
    # naive Sakai bootstrap for pair (0, 1), independent resamples
    z = per_query[0] - per_query[1]
    t_observed = abs(z.mean() / (z.std(ddof=1) / np.sqrt(len(z))))
    w = z - z.mean()
    naive_rng = np.random.default_rng(123)
    exceed = 0
    for _ in range(2000):
        sample = w[naive_rng.integers(0, len(w), len(w))]
        exceed += abs(sample.mean() / (sample.std(ddof=1) / np.sqrt(len(w)))) >= t_observed
    assert pvalues[0] == pytest.approx(exceed / 2000, abs=0.04)  # two Monte-Carlo estimates of one p-value
    assert pvalues[1] == 0.0 and pvalues[2] == 0.0  # a 0.5 shift on 400 queries is never reached by chance
    result = discriminative_power(per_query, test="bootstrap", n_bootstrap=2000, seed=9)
    assert result.auc == pytest.approx(pvalues.mean())


# ------------------------------------------------------------------------------------------- open world


def _brute_force_rank(answer_score: float, competitor_scores: np.ndarray) -> float:
    return 1 + np.sum(competitor_scores > answer_score) + 0.5 * np.sum(competitor_scores == answer_score)


def test_answer_rank_shift_matches_brute_force_reranking() -> None:
    rng = np.random.default_rng(8)
    n_systems, n_questions = 3, 6
    question_of_answer = rng.integers(0, n_questions, 25)
    answer_scores = rng.integers(0, 6, size=(n_systems, 25)).astype(float)  # ties on purpose
    non_answer_scores = rng.integers(0, 6, size=(n_systems, n_questions, 8)).astype(float)
    closed = np.array([[_brute_force_rank(answer_scores[s, a], non_answer_scores[s, question_of_answer[a]])
                        for a in range(25)] for s in range(n_systems)])
    shift = AnswerRankShift(closed, answer_scores, question_of_answer)
    kept = rng.random(25) < 0.6
    expected = np.array([[
        _brute_force_rank(
            answer_scores[s, a],
            np.concatenate([non_answer_scores[s, question_of_answer[a]],
                            answer_scores[s, (question_of_answer == question_of_answer[a]) & ~kept]]),
        ) for a in range(25)] for s in range(n_systems)])
    assert shift.shifted_ranks(kept)[:, kept] == pytest.approx(expected[:, kept])
    assert shift.shifted_ranks(np.ones(25, bool)) == pytest.approx(closed)


def test_open_world_simulation_no_drop_keeps_tau_one_and_is_seeded() -> None:
    rng = np.random.default_rng(10)
    n_systems, n_answers = 5, 300
    question_of_answer = rng.integers(0, 60, n_answers)
    answer_scores = rng.random((n_systems, n_answers))
    closed_ranks = 1 + rng.integers(0, 20, (n_systems, n_answers)) + np.arange(n_systems)[:, None]
    shift = AnswerRankShift(closed_ranks, answer_scores, question_of_answer)
    seen_kept: list[int] = []

    def metric_fn(kept_mask: np.ndarray) -> np.ndarray:
        seen_kept.append(int(kept_mask.sum()))
        return shift.micro_metric_fn()(kept_mask)

    result = open_world_simulation(metric_fn, n_answers, drop_fractions=(0.0, 0.5), n_repeats=4, seed=11)
    assert result.taus[0] == pytest.approx(np.ones(4))
    assert result.mean_tau[0] == pytest.approx(1.0)
    assert seen_kept == [300] + [300] * 4 + [150] * 4  # closed world, then exactly 0% / 50% dropped
    again = open_world_simulation(shift.micro_metric_fn(), n_answers, drop_fractions=(0.0, 0.5), n_repeats=4,
                                  seed=11)
    np.testing.assert_array_equal(result.taus, again.taus)
    assert result.closed_world_scores == pytest.approx(np.mean(1 / closed_ranks, axis=1))


@pytest.mark.slow
def test_data_sensitivity_full_size_runs_well_within_a_minute() -> None:
    # The SPEC 5.5 workload: 20 sizes x 50 draws x 13 systems x 10 metrics on 22,850 questions.
    import time

    rng = np.random.default_rng(12)
    per_query = rng.random((13, 10, 22850), dtype=np.float64) + np.linspace(0, 0.02, 13)[:, None, None]
    start = time.perf_counter()
    result = data_sensitivity(per_query, n_draws=50, seed=0)
    elapsed = time.perf_counter() - start
    assert result.taus.shape == (20, 50, 10)
    assert elapsed < 60, f"data sensitivity took {elapsed:.1f} s"
    assert np.all(np.diff(result.mean_tau.mean(axis=1))[5:] > -0.05)  # tau grows (noisily) with the size
