"""The continuous-active-learning orders ``cal`` and ``cal_top`` (issue 20) on hand-made pools where the right next
item is known (pure numpy, no database)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from annotation.lib.cal_order import DEPTH_SHARE, MIN_CLASS, SHRINK, _loo_yield, candidate_features, fit_logistic
from annotation.lib.judging_order import JudgingState, PoolView, order_items


def marked_pool(seed: int) -> tuple[PoolView, np.ndarray]:
    """40 items of one question, two systems that rank them at random; 10 positives, each with a static feature
    value 1 that no negative has, and the positives are the deepest items (depth order finds them last)."""
    rng = np.random.default_rng(seed)
    n = 40
    depth = np.arange(1, n + 1)
    positive = depth > 30
    marker = positive.astype(float) + rng.normal(0, 0.01, n)
    noise = rng.normal(0, 1, n)
    items = np.r_[np.arange(n), np.arange(n)]
    systems = np.r_[np.zeros(n, int), np.ones(n, int)]
    ranks = np.r_[depth, depth]
    pool = PoolView.build(n, items, systems, np.zeros(2 * n, int), ranks, num_systems=2, num_questions=1,
                          item_features=np.column_stack([noise, marker]))
    return pool, positive


@pytest.mark.parametrize("seed", range(3))
def test_cal_learns_a_feature_that_separates_the_positives_from_a_few_labels(seed):
    pool, positive = marked_pool(seed)
    # before MIN_CLASS labels of each class: the cold start (depth order), the positives come last
    cold = order_items("cal", pool, JudgingState.from_labels(40, {0: False}), seed=seed)
    assert not positive[cold[:29]].any()
    # MIN_CLASS of each: every remaining positive is handed out before any negative
    labels = {i: False for i in range(MIN_CLASS)} | {30 + i: True for i in range(MIN_CLASS)}
    ordered = order_items("cal", pool, JudgingState.from_labels(40, labels), seed=seed)
    rest = 10 - MIN_CLASS
    assert positive[ordered[:rest]].all() and not positive[ordered[rest:]].any()


def test_cal_order_is_deterministic_for_a_seed_and_ties_follow_the_seed():
    pool, _positive = marked_pool(0)
    state = JudgingState.from_labels(40, {0: False, 1: False, 2: False, 30: True, 31: True, 32: True})
    assert order_items("cal", pool, state, seed=5).tolist() == order_items("cal", pool, state, seed=5).tolist()
    # a pool of identical items: only the seed orders them
    flat = PoolView.build(6, range(6), [0] * 6, [0] * 6, [1] * 6, num_systems=1, num_questions=1)
    orders = {tuple(order_items("cal", flat, JudgingState.empty(6), seed=s).tolist()) for s in range(6)}
    assert len(orders) > 1


def test_cal_top_takes_every_systems_top_candidates_first():
    pool, positive = marked_pool(1)
    labels = {i: False for i in range(2, 2 + MIN_CLASS)} | {30 + i: True for i in range(MIN_CLASS)}
    ordered = order_items("cal_top", pool, JudgingState.from_labels(40, labels), seed=0)
    assert ordered[0] == 0  # the only unjudged item at rank 1, although CAL rates it negative
    assert positive[ordered[1:8]].all()  # then CAL's order


def test_leave_one_out_yield_ignores_the_items_own_label():
    # one group: items 0 (Y), 1 (N) judged, 2 unjudged; prior 0.5
    state = JudgingState.from_labels(3, {0: True, 1: False})
    got = _loo_yield(np.zeros(3, dtype=np.int64), 1, state, 0.5)
    expected = [(0 + SHRINK * 0.5) / (1 + SHRINK), (1 + SHRINK * 0.5) / (1 + SHRINK), (1 + SHRINK * 0.5) / (2 + SHRINK)]
    assert np.allclose(got, expected)


def test_logistic_fit_matches_a_generic_optimiser():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 3))
    y = (x @ np.array([1.5, -2.0, 0.0]) + rng.logistic(size=200)) > 0

    def loss(w):
        z = w[0] + x @ w[1:]
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * 1.0 * np.sum(w[1:] ** 2)

    reference = minimize(loss, np.zeros(4), method="BFGS", options={"gtol": 1e-8}).x
    assert np.allclose(fit_logistic(x, y, l2=1.0), reference, atol=1e-4)


def test_candidate_features_count_degree_and_role_in_train():
    # train: 0 -r0-> 1, 2 -r0-> 1, 1 -r1-> 3
    train = np.array([[0, 0, 1], [2, 0, 1], [1, 1, 3]])
    # candidate 1 as a tail of r0 (twice in train, degree 3); 1 as a head of r0 (never); 3 as tail of r0 (never)
    got = candidate_features(np.array([1, 1, 3]), np.array([0, 0, 0]), np.array([1, 0, 1]), train, 4)
    # r0 has 2 train triples: share = log((count + 1) / 3)
    expected = np.array([[np.log1p(3), np.log1p(2), 1.0, np.log(3 / 3)], [np.log1p(3), 0.0, 0.0, np.log(1 / 3)],
                         [np.log1p(1), 0.0, 0.0, np.log(1 / 3)]])
    assert np.allclose(got, expected)


def test_cal_mix_interleaves_depth_order_into_cals_order():
    pool, positive = marked_pool(2)
    labels = {i: False for i in range(MIN_CLASS)} | {30 + i: True for i in range(MIN_CLASS)}
    ordered = order_items("cal_mix", pool, JudgingState.from_labels(40, labels), seed=0)
    # DEPTH_SHARE 0.3: of the first ten, seven from CAL's order (the seven unjudged positives) and three from
    # depth order (the three shallowest unjudged items), interleaved
    assert DEPTH_SHARE == 0.3
    first = ordered[:10].tolist()
    assert sorted(first) == [3, 4, 5] + list(range(33, 40))
    assert first.index(3) < first.index(4) < first.index(5) and first.index(5) > 3  # spread, not a block
    assert positive[ordered[10:]].sum() == 0


def test_the_hindsight_ceiling_ranks_separable_positives_first():
    from annotation.lib.cal_order import hindsight_scores

    pool, positive = marked_pool(3)
    scores = hindsight_scores(pool, positive)
    assert scores[positive].min() > scores[~positive].max()
