"""cal_order.cal_scores keeps a feature whose spread over the judged items is below 1e-9 in its own unit (scale 1:
"constant", neither blown up to unit spread nor shrunk), issue 19. The expected scores are built from the tested
pieces (_static, _dynamic, fit_logistic) with that rule written out. Django-free."""
from __future__ import annotations

import numpy as np

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def pool_with(feature: np.ndarray) -> PoolView:
    n = feature.size
    return PoolView.build(n, np.arange(n), np.arange(n) % 2, np.zeros(n, int), np.arange(n) % 5 + 1, num_systems=2,
                          num_questions=1, item_features=feature[:, None])


def expected_scores(pool, state, train):
    features = np.hstack([lib._static(pool), lib._dynamic(pool, state)])
    mean, scale = features[train].mean(axis=0), features[train].std(axis=0)
    scale = np.where(scale < 1e-9, 1.0, scale)
    standard = (features - mean) / scale
    w = lib.fit_logistic(standard[train], state.positive[train])
    return w[0] + standard @ w[1:]


def flat_feature(truth, judged):
    # 1e-9 on the positives, 0 on the negatives among the judged (spread 5e-10); the unjudged far away
    feature = np.where(truth, 1e-9, 0.0)
    feature[~judged] = 1e9 * np.where(truth[~judged], 1, -1)
    return feature


def test_cal_scores_keep_a_flat_feature_in_its_unit():
    n = 14
    truth = np.arange(n) % 2 == 0
    judged = np.arange(n) < 10
    state = JudgingState.from_labels(n, {i: bool(truth[i]) for i in range(10)})
    pool = pool_with(flat_feature(truth, judged))
    expected = expected_scores(pool, state, state.judged)
    assert np.ptp(expected[~judged]) > 0.5  # the flat feature still moves the far unjudged items
    assert np.allclose(lib.cal_scores(pool, state), expected, rtol=0, atol=1e-6)

