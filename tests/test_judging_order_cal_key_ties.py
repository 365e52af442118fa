"""cal_order.cal_keys once the model is fitted (issue 19): a higher score (rounded to 9 decimals) always comes
first, whatever the cold start; equal rounded scores come in cold-start order (deeper items later, then fewer
systems). The scores are given (cal_scores replaced), so each case is checked by hand. Django-free."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def pool_and_state():
    # items 0..3 at depths 1, 4, 2, 1, item 3 retrieved by both systems; item 4 has no hit (stored depth 4):
    # cold start (4 - depth) * 3 + votes
    pool = PoolView.build(5, [0, 1, 2, 3, 3], [0, 0, 0, 0, 1], [0] * 5, [1, 4, 2, 1, 1], num_systems=2,
                          num_questions=1, depth=[9, 9, 9, 9, 4])
    assert lib._cold_start(pool).tolist() == [10, 1, 7, 11, 0]
    return pool, JudgingState.empty(5)


def keys_for(monkeypatch, scores, **options):
    pool, state = pool_and_state()
    monkeypatch.setattr(lib, "cal_scores", lambda _pool, _state: np.array(scores, dtype=np.float64))
    keys = lib.cal_keys(pool, state, **options)
    order = sorted(range(5), key=lambda i: -keys[i])  # the order handed out
    assert len(set(keys.tolist())) == 5  # no two items tie
    return order


@pytest.mark.parametrize("scores, expected", [
    # distinct scores: the score alone, although the cold start says the opposite
    ([0.1, 0.4, 0.3, 0.2, 0.5], [4, 1, 2, 3, 0]),
    ([-2.0, 5.0, 1.0, -3.0, 0.0], [1, 2, 4, 0, 3]),
    # one score step apart: item 4 (cold 0) above item 3 (the largest cold start, 11), item 1 (1) above 0 (10)
    ([0.0, 0.3, 0.0, 0.1, 0.2], [1, 4, 3, 0, 2]),
    # ties: the cold start (item 3 > 0 > 2 > 1 > 4)
    ([0.5, 0.5, 0.5, 0.5, 0.5], [3, 0, 2, 1, 4]),
    ([0.5, 0.7, 0.5, 0.5, 0.5], [1, 3, 0, 2, 4]),
    # scores that differ below 1e-9 are equal once rounded: the cold start decides
    ([0.1, 0.1 + 4e-10, 0.1 - 3e-10, 0.1 + 2e-10, 0.1 + 3e-10], [3, 0, 2, 1, 4]),
])
def test_score_first_then_the_cold_start(monkeypatch, scores, expected):
    assert keys_for(monkeypatch, scores) == expected


def test_cal_top_puts_the_rank_1_items_first_in_score_order(monkeypatch):
    # depth 1: items 0 and 3
    assert keys_for(monkeypatch, [0.1, 0.4, 0.3, 0.2, 0.5], top_first=True) == [3, 0, 4, 1, 2]
    assert keys_for(monkeypatch, [0.5, 0.5, 0.5, 0.5, 0.5], top_first=True) == [3, 0, 2, 1, 4]
