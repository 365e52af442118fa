"""annotation/lib/judging_pool.py without Django (issue 19): PoolView.build's sorting, defaults, depth and checks
(whole messages), subset / items_without / the per-item properties against plain-Python references on seeded
random pools, JudgingState, and the dense rank."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from annotation.lib.judging_pool import JudgingState, OrderError, PoolView, _dense_rank
from tests._raises_support import whole


def random_hits(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 10))
    hits = int(rng.integers(0, 3 * n))
    return (n, rng.integers(0, n, hits), rng.integers(0, 3, hits), rng.integers(0, 2, hits),
            rng.integers(1, 9, hits), rng)


@pytest.mark.parametrize("seed", range(30))
def test_build_sorts_hits_by_item_stably_and_takes_the_best_rank_as_depth(seed):
    n, item, system, question, rank, rng = random_hits(seed)
    given = rng.integers(1, 50, n)
    pool = PoolView.build(n, item.tolist(), system.tolist(), question.tolist(), rank.tolist(), depth=given)
    rows = sorted(zip(item.tolist(), range(item.size)))  # stable: equal items keep their input order
    order = [i for _, i in rows]
    assert pool.hit_item.tolist() == [int(item[i]) for i in order]
    assert pool.hit_system.tolist() == [int(system[i]) for i in order]
    assert pool.hit_question.tolist() == [int(question[i]) for i in order]
    assert pool.hit_rank.tolist() == [int(rank[i]) for i in order]
    for array in (pool.hit_item, pool.hit_system, pool.hit_question, pool.hit_rank, pool.depth):
        assert array.dtype == np.int64
    # default counts: the largest id + 1 (0 without hits)
    assert pool.num_systems == (int(system.max()) + 1 if system.size else 0)
    assert pool.num_questions == (int(question.max()) + 1 if question.size else 0)
    # depth: the best rank of the item's hits, else the given depth
    for i in range(n):
        ranks = [int(r) for it, r in zip(item.tolist(), rank.tolist()) if it == i]
        assert pool.depth[i] == (min(ranks) if ranks else given[i])
    # per-question defaults: zeros of the question count
    for array in (pool.question_relation, pool.question_group, pool.question_known):
        assert array.tolist() == [0] * pool.num_questions and array.dtype == np.int64
    assert pool.item_candidate is None and pool.item_features is None


def test_build_defaults_and_given_arrays():
    # no depth given: an item without hits is 10**6 deep
    pool = PoolView.build(3, [2, 0], [1, 0], [0, 1], [4, 2])
    assert pool.depth.tolist() == [2, 10**6, 4]
    assert (pool.num_items, pool.num_systems, pool.num_questions) == (3, 2, 2)
    pool = PoolView.build(2, [], [], [], [], num_systems=4, num_questions=1, question_relation=[7],
                          question_group=[3], question_known=[12], item_candidate=[5, 6],
                          item_features=[[0.5, 1], [2, 3]])
    assert (pool.num_systems, pool.num_questions) == (4, 1)
    assert (pool.question_relation.tolist(), pool.question_group.tolist(), pool.question_known.tolist()) == \
        ([7], [3], [12])
    assert pool.item_candidate.tolist() == [5, 6] and pool.item_candidate.dtype == np.int64
    assert pool.item_features.tolist() == [[0.5, 1.0], [2.0, 3.0]] and pool.item_features.dtype == np.float64
    assert pool.depth.tolist() == [10**6, 10**6]
    with pytest.raises(FrozenInstanceError):
        pool.num_items = 3


def test_build_checks_with_whole_messages():
    with pytest.raises(OrderError, match=whole("a hit names an item outside 0..num_items-1")):
        PoolView.build(2, [0, 2], [0, 0], [0, 0], [1, 1])
    with pytest.raises(OrderError, match=whole("a hit names an item outside 0..num_items-1")):
        PoolView.build(2, [-1, 1], [0, 0], [0, 0], [1, 1])
    PoolView.build(2, [0, 1], [0, 0], [0, 0], [1, 1])  # the bounds themselves are fine
    with pytest.raises(OrderError, match=whole("hit ranks are 1-based")):
        PoolView.build(2, [0, 1], [0, 0], [0, 0], [1, 0])
    with pytest.raises(OrderError, match=whole("per-question arrays need 2 values, got (3,)")):
        PoolView.build(1, [0], [0], [1], [1], question_relation=[0, 0, 0])
    with pytest.raises(OrderError, match=whole("per-question arrays need 2 values, got (1,)")):
        PoolView.build(1, [0], [0], [1], [1], question_group=[0])
    with pytest.raises(OrderError, match=whole("per-question arrays need 2 values, got (2, 1)")):
        PoolView.build(1, [0], [0], [1], [1], question_known=[[0], [0]])
    with pytest.raises(OrderError, match=whole("per-item arrays need 2 rows, got (3,)")):
        PoolView.build(2, [0], [0], [0], [1], item_candidate=[0, 1, 2])
    with pytest.raises(OrderError, match=whole("per-item arrays need 2 rows, got (1, 4)")):
        PoolView.build(2, [0], [0], [0], [1], item_features=[[0, 0, 0, 0]])
    assert issubclass(OrderError, ValueError)


@pytest.mark.parametrize("seed", range(20))
def test_subset_and_items_without_against_references(seed):
    n, item, system, question, rank, rng = random_hits(seed)
    pool = PoolView.build(n, item, system, question, rank, num_systems=3, num_questions=2, depth=rng.integers(1, 9, n),
                          item_candidate=rng.integers(0, 5, n), item_features=rng.normal(size=(n, 2)))
    chosen = rng.integers(0, n, int(rng.integers(0, n + 2)))
    sub = pool.subset(chosen)
    kept = sorted(set(chosen.tolist()))
    new = {old: i for i, old in enumerate(kept)}
    assert sub.num_items == len(kept) and (sub.num_systems, sub.num_questions) == (3, 2)
    expected = [(new[i], s, q, r) for i, s, q, r in zip(pool.hit_item.tolist(), pool.hit_system.tolist(),
                                                         pool.hit_question.tolist(), pool.hit_rank.tolist()) if i in new]
    assert list(zip(sub.hit_item.tolist(), sub.hit_system.tolist(), sub.hit_question.tolist(),
                    sub.hit_rank.tolist())) == expected
    assert sub.depth.tolist() == [int(pool.depth[i]) for i in kept]
    assert sub.item_candidate.tolist() == [int(pool.item_candidate[i]) for i in kept]
    assert sub.item_features.tolist() == [pool.item_features[i].tolist() for i in kept]
    assert sub.question_known is pool.question_known
    bare = PoolView.build(n, item, system, question, rank).subset(chosen)
    assert bare.item_candidate is None and bare.item_features is None
    # leave-one-out: an item stays when another system retrieved it, or when no system did
    for left_out in ([0], [1, 2], 2):
        dropped = set(np.atleast_1d(left_out).tolist())
        expected = [not any(True for i, s in zip(item.tolist(), system.tolist()) if i == it) or
                    any(s not in dropped for i, s in zip(item.tolist(), system.tolist()) if i == it)
                    for it in range(n)]
        assert pool.items_without(left_out).tolist() == expected


@pytest.mark.parametrize("seed", range(20))
def test_per_item_properties_against_references(seed):
    n, item, system, question, rank, _ = random_hits(seed)
    pool = PoolView.build(n, item, system, question, rank, num_systems=3, num_questions=2)
    rows = list(zip(pool.hit_item.tolist(), pool.hit_question.tolist(), pool.hit_rank.tolist()))
    items, starts = pool.item_blocks
    with_hits = sorted(set(item.tolist()))
    assert items.tolist() == with_hits
    assert starts.tolist() == [pool.hit_item.tolist().index(i) for i in with_hits]
    assert pool.item_blocks is pool.item_blocks  # kept on the view
    # the question of the best-ranked hit (the first of equal ranks in hit order), 0 without hits
    expected = []
    for it in range(n):
        mine = [(r, position, q) for position, (i, q, r) in enumerate(rows) if i == it]
        expected.append(min(mine)[2] if mine else 0)
    assert pool.item_question.tolist() == expected
    assert pool.hit_starts.tolist() == [sum(1 for i in pool.hit_item.tolist() if i < it) for it in range(n)]
    assert pool.systems_per_item().tolist() == [
        len({s for i, s in zip(item.tolist(), system.tolist()) if i == it}) for it in range(n)]


def test_empty_pool_properties():
    pool = PoolView.build(2, [], [], [], [], num_systems=0, num_questions=1)
    items, starts = pool.item_blocks
    assert items.tolist() == [] and starts.tolist() == [] and starts.dtype == np.int64
    assert pool.item_question.tolist() == [0, 0]
    assert pool.systems_per_item().tolist() == [0, 0]
    assert pool.hit_starts.tolist() == [0, 0]


def test_judging_state():
    empty = JudgingState.empty(3)
    assert empty.judged.tolist() == [False] * 3 and empty.positive.tolist() == [False] * 3
    assert empty.judged.dtype == bool and empty.positive.dtype == bool
    state = JudgingState.from_labels(4, {2: True, 0: False})
    assert state.judged.tolist() == [True, False, True, False]
    assert state.positive.tolist() == [False, False, True, False]


def test_dense_rank():
    values = np.array([[3.5, -1.0], [3.5, 7.0]])
    ranks = _dense_rank(values)
    assert ranks.tolist() == [[1, 0], [1, 2]] and ranks.dtype == np.int64
    empty = _dense_rank(np.zeros(0))
    assert empty.tolist() == [] and empty.dtype == np.int64
