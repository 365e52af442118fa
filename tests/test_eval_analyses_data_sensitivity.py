"""data_sensitivity's details: which queries a draw takes, the tie tolerance between system means, the spread over
draws, and means of scores near the largest float (independent references: the replayed keys, numpy's std)."""
from __future__ import annotations

import numpy as np

from evaluation.core.analyses import _random_subset_matrix, data_sensitivity


def test_a_draw_takes_the_queries_with_the_smallest_keys() -> None:
    # (1000 queries: numpy's argpartition leaves small rows fully sorted, which hides a wrong partition index)
    for num_queries, size in [(8, 1), (8, 2), (8, 5), (8, 8), (1000, 1), (1000, 2), (1000, 37)]:
        selection = _random_subset_matrix(np.random.default_rng(7), 30, num_queries, size)
        keys = np.random.default_rng(7).random((30, num_queries))  # the same keys, replayed
        expected = np.zeros((30, num_queries))
        np.put_along_axis(expected, np.argsort(keys, axis=1)[:, :size], 1.0, axis=1)
        np.testing.assert_array_equal(selection, expected)


def test_means_closer_than_1e_10_relative_tie_and_farther_do_not() -> None:
    # system means 1 and 1 + 1.5e-10: apart (tau 1 on the whole set); 1 and 1 + 0.5e-10: tied (tau undefined)
    apart = data_sensitivity(np.array([[1.0, 1.0], [1.0 + 3e-10, 1.0]]), fractions=(1.0,), n_draws=2)
    assert apart.taus.tolist() == [[1.0, 1.0]]
    tied = data_sensitivity(np.array([[1.0, 1.0], [1.0 + 1e-10, 1.0]]), fractions=(1.0,), n_draws=2)
    assert np.isnan(tied.taus).all()


def test_std_is_over_the_draws() -> None:
    rng = np.random.default_rng(5)
    per_query = rng.random((4, 2, 12))
    result = data_sensitivity(per_query, fractions=(0.25, 0.5), n_draws=7, seed=3)
    assert result.std_tau.shape == (2, 2) and (result.std_tau > 0).all()
    np.testing.assert_array_equal(result.std_tau, np.std(result.taus, axis=1))
    single = data_sensitivity(per_query[:, 1], fractions=(0.25, 0.5), n_draws=7, seed=3)
    np.testing.assert_array_equal(single.std_tau, result.std_tau[:, 1])


def test_means_of_scores_near_the_largest_float_stay_finite() -> None:
    # sums of 1e308 and 0.9e308 are finite, so are their means: the systems stay apart (sum * Q would overflow)
    per_query = np.array([[1e308, 0.0], [0.9e308, 0.0]])
    result = data_sensitivity(per_query, fractions=(1.0,), n_draws=2)
    assert result.taus.tolist() == [[1.0, 1.0]] and result.mean_tau.tolist() == [1.0]
