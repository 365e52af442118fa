"""judging_pool at its smallest sizes (issue 19): one system (each item's vote count is its own, not shared with a
neighbour's), a dense rank of one value, and a JudgingState that cannot be rebound (the orders share it).
Django-free."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from annotation.lib.judging_pool import JudgingState, PoolView, _dense_rank


@pytest.mark.parametrize("num_systems", [None, 1])
def test_one_system_votes_once_per_item(num_systems):
    # items 0..4; item 2 retrieved twice by the only system, item 4 not at all
    pool = PoolView.build(5, [0, 1, 2, 2, 3], [0] * 5, [0] * 5, [1, 2, 3, 4, 5], num_systems=num_systems,
                          depth=[1, 1, 1, 1, 6])
    assert pool.num_systems == 1
    assert pool.systems_per_item().tolist() == [1, 1, 1, 1, 0]


def test_dense_rank_of_one_value():
    assert _dense_rank(np.array([3.5])).tolist() == [0]
    assert _dense_rank(np.array([[-2.0]])).tolist() == [[0]]


def test_judging_state_is_frozen():
    state = JudgingState.empty(2)
    with pytest.raises(FrozenInstanceError):
        state.judged = np.ones(2, dtype=bool)
    with pytest.raises(FrozenInstanceError):
        state.positive = np.ones(2, dtype=bool)
