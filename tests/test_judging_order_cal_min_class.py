"""cal_order.cal_scores fits the model only once *each* class has MIN_CLASS final labels (issue 19: a count of
judged items in place of positives, or of unjudged in place of negatives, starts it too early). Django-free."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def pool_of(n: int) -> PoolView:
    rng = np.random.default_rng(n)
    return PoolView.build(n, np.arange(n), np.arange(n) % 2, np.zeros(n, int), rng.integers(1, 6, n), num_systems=2,
                          num_questions=1, item_features=rng.normal(size=(n, 2)))


@pytest.mark.parametrize("positives, negatives, fitted", [
    (2, 8, False), (8, 2, False), (2, 2, False), (3, 2, False), (2, 3, False), (3, 3, True), (3, 8, True),
    (8, 3, True),
])
def test_the_model_waits_for_min_class_labels_of_each_class(positives, negatives, fitted):
    n = 16
    labels = {i: True for i in range(positives)} | {positives + i: False for i in range(negatives)}
    state = JudgingState.from_labels(n, labels)
    scores = lib.cal_scores(pool_of(n), state)
    assert (scores is not None) == fitted
    if fitted:
        assert scores.shape == (n,) and np.isfinite(scores).all()


def test_positive_flags_on_unjudged_items_are_not_labels():
    # positive without judged (a stale flag) counts for neither class: 2 positives + 3 flags stay 2 positives
    n = 16
    state = JudgingState.from_labels(n, {0: True, 1: True, 2: False, 3: False, 4: False})
    state.positive[10:13] = True
    assert lib.cal_scores(pool_of(n), state) is None
