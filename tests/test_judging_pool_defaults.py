"""judging_pool.PoolView's optional per-item arrays and its "no hit" sentinel (issue 19): a view made directly
(not by build) has no candidates and no KG features (None, which the cal orders test for), and any rank below
the sentinel max int64 // 4 is an item's depth, however large. Django-free."""
from __future__ import annotations

import numpy as np

from annotation.lib import cal_order
from annotation.lib.judging_pool import JudgingState, PoolView


def bare_view() -> PoolView:
    # three items, one system, one question, made field by field
    return PoolView(3, 1, 1, np.array([0, 1, 2]), np.zeros(3, np.int64), np.zeros(3, np.int64), np.array([1, 2, 3]),
                    np.array([1, 2, 3]), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))


def test_a_view_made_directly_has_no_candidates_and_no_features():
    pool = bare_view()
    assert pool.item_candidate is None and pool.item_features is None
    # the cal orders' features then have no candidate or KG columns: reciprocal rank, log depth, systems, known
    assert cal_order._static(pool).shape == (3, 4)
    assert cal_order._dynamic(pool, JudgingState.empty(3)).shape == (3, 2)


def test_huge_ranks_below_the_sentinel_are_depths():
    sentinel = np.iinfo(np.int64).max // 4
    ranks = [sentinel - 1, sentinel - 2, sentinel - 1000, 5]
    pool = PoolView.build(5, [0, 1, 2, 3], [0] * 4, [0] * 4, ranks, depth=[7, 7, 7, 7, 9])
    assert pool.depth.tolist() == ranks + [9]
    assert PoolView.build(5, [0, 1, 2, 3], [0] * 4, [0] * 4, ranks).depth.tolist() == ranks + [10**6]
