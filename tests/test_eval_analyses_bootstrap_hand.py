"""Sakai's paired bootstrap on hand-computed cases: which resamples count as at least as extreme as the observed t,
ties included and resamples of zeros; the result types are frozen, open_world_simulation's default seed is 0."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluation.core.analyses import (
    _bootstrap_counts,
    discriminative_power,
    open_world_simulation,
    paired_bootstrap_pvalues,
)


def test_a_zero_mean_difference_gives_p_one() -> None:
    # differences 1, -1: observed t = 0; a mixed resample has t = 0 exactly (a tie counts), a constant one t = inf
    for n_bootstrap in (1, 7, 150):
        _, pvalues = paired_bootstrap_pvalues(np.array([[1.0, -1.0], [0.0, 0.0]]), n_bootstrap=n_bootstrap, seed=4)
        assert pvalues.tolist() == [1.0]


def test_resamples_counted_by_hand() -> None:
    # differences z = 1, 4, -2: mean 1, sd 3, observed t = 1 / (3 / sqrt 3) = 0.577; the null sample w = 0, 3, -3.
    # |t| of a resample of w by its counts (c0, c1, c2): (1, 1, 1) 0; (0, 2, 1) and (0, 1, 2) 0.5; (3, 0, 0) all
    # zeros, 0 / 0, no difference: 0; every other resample 1, 2 or inf >= 0.577
    per_query = np.array([[1.0, 4.0, -2.0], [0.0, 0.0, 0.0]])
    n_bootstrap, seed = 300, 11
    counts = _bootstrap_counts(np.random.default_rng(seed), n_bootstrap, 3)
    below = {(1, 1, 1), (0, 2, 1), (0, 1, 2), (3, 0, 0)}
    exceed = sum(tuple(row) not in below for row in counts.tolist())
    assert sum(tuple(row) == (3, 0, 0) for row in counts.tolist()) > 0  # the case is exercised
    _, pvalues = paired_bootstrap_pvalues(per_query, n_bootstrap=n_bootstrap, seed=seed, sample_chunk=7)
    assert pvalues.tolist() == [exceed / n_bootstrap]


def test_result_types_are_frozen() -> None:
    power = discriminative_power(np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        power.auc = 0.0
    world = open_world_simulation(lambda kept: np.array([kept.sum(), 1.0, 2.0]), 4, drop_fractions=(0.5,),
                                  n_repeats=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        world.taus = None


def test_open_world_default_seed_is_zero() -> None:
    def metric(kept: np.ndarray) -> np.ndarray:  # the systems' order depends on which answers are dropped
        return np.array([kept[:3].sum(), kept[3:6].sum(), kept[6:].sum() + 0.5])

    default = open_world_simulation(metric, 9, drop_fractions=(0.3, 0.6), n_repeats=6)
    np.testing.assert_array_equal(default.taus, open_world_simulation(metric, 9, drop_fractions=(0.3, 0.6),
                                                                      n_repeats=6, seed=0).taus)
    assert not np.array_equal(default.taus, open_world_simulation(metric, 9, drop_fractions=(0.3, 0.6),
                                                                  n_repeats=6, seed=1).taus, equal_nan=True)
