"""cal_order.cal_scores standardises every feature over the judged items (issue 19): the scores do not depend on
a static feature's unit as long as its spread over the judged items is above 1e-9 (below, the column counts as
constant). Django-free."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def pool_with(feature: np.ndarray) -> PoolView:
    n = feature.size
    return PoolView.build(n, np.arange(n), np.arange(n) % 2, np.zeros(n, int), np.arange(n) % 5 + 1, num_systems=2,
                          num_questions=1, item_features=feature[:, None])


@pytest.mark.parametrize("spread", [1.05e-9, 1.5e-9, 1.95e-9, 1e-3, 1e3])
def test_scores_do_not_depend_on_a_features_unit(spread):
    rng = np.random.default_rng(7)
    n = 20
    truth = np.arange(n) % 3 == 0
    feature = truth + rng.normal(0, 0.5, n)  # informative: the model leans on it
    state = JudgingState.from_labels(n, {i: bool(truth[i]) for i in range(12)})
    unit = spread / feature[state.judged].std()
    reference = lib.cal_scores(pool_with(feature), state)
    scaled = lib.cal_scores(pool_with(feature * unit), state)
    assert np.ptp(reference) > 1.0
    assert np.allclose(scaled, reference, rtol=0, atol=1e-5)


def test_a_spread_of_exactly_1e_9_still_counts():
    n = 12
    truth = np.arange(n) % 2 == 0
    state = JudgingState.from_labels(n, {i: bool(truth[i]) for i in range(8)})
    feature = truth.astype(float)  # 1 for the positives: std 0.5 over the judged items
    assert (feature * 2e-9)[state.judged].std() == 1e-9
    reference = lib.cal_scores(pool_with(feature), state)
    assert np.ptp(reference) > 1.0
    assert np.allclose(lib.cal_scores(pool_with(feature * 2e-9), state), reference, rtol=0, atol=1e-5)


@pytest.mark.parametrize("spread", [1e-9, 1.5e-9, 1.95e-9, 1.0])
def test_hindsight_scores_do_not_depend_on_a_features_unit(spread):
    n = 12
    truth = np.arange(n) % 2 == 0
    rng = np.random.default_rng(3)
    feature = truth + rng.normal(0, 0.3, n) if spread != 1e-9 else truth.astype(float)
    unit = spread / feature.std()
    if spread == 1e-9:
        unit = 2e-9  # 0 / 2e-9 on every item: a std of exactly 1e-9
        assert (feature * unit).std() == 1e-9
    reference = lib.hindsight_scores(pool_with(feature), truth)
    assert np.ptp(reference) > 1.0
    assert np.allclose(lib.hindsight_scores(pool_with(feature * unit), truth), reference, rtol=0, atol=1e-5)
