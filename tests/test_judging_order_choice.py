"""Judging orders (issue 20) on hand-made pools where the right next item is known (pure numpy, no database).

Pool used below: two systems A (0) and B (1), one question; A ranks a1, a2, a3; B ranks b1, b2, b3 (all distinct
items 0..5), unless a test says otherwise.
"""
from __future__ import annotations

import pytest

from annotation.lib.judging_order import JudgingState, PoolView, order_items

A1, A2, A3, B1, B2, B3 = range(6)


def two_runs(**extra) -> PoolView:
    items = [A1, A2, A3, B1, B2, B3]
    systems = [0, 0, 0, 1, 1, 1]
    ranks = [1, 2, 3, 1, 2, 3]
    return PoolView.build(6, items, systems, [0] * 6, ranks, num_systems=2, num_questions=1, **extra)


def first(order: str, pool: PoolView, labels: dict[int, bool], seed: int = 0) -> int:
    return int(order_items(order, pool, JudgingState.from_labels(pool.num_items, labels), seed=seed, limit=1)[0])


def test_depth_order_takes_shallower_items_first_whatever_the_seed():
    pool = PoolView.build(4, [0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 0, 0], [3, 1, 2, 1], num_systems=2, num_questions=1)
    for seed in range(5):
        ordered = order_items("depth", pool, JudgingState.empty(4), seed=seed).tolist()
        assert sorted(ordered[:2]) == [1, 3] and ordered[2:] == [2, 0]


def test_random_order_is_a_seeded_permutation_of_the_unjudged():
    pool = two_runs()
    ordered = order_items("random", pool, JudgingState.from_labels(6, {A1: True}), seed=3)
    assert sorted(ordered.tolist()) == [A2, A3, B1, B2, B3]
    assert ordered.tolist() == order_items("random", pool, JudgingState.from_labels(6, {A1: True}), seed=3).tolist()
    assert len({tuple(order_items("random", pool, JudgingState.empty(6), seed=s).tolist()) for s in range(8)}) > 1


@pytest.mark.parametrize("seed", range(4))
def test_move_to_front_stays_on_a_run_while_it_is_relevant_and_leaves_it_on_a_miss(seed):
    pool = two_runs()
    # A's top item was not relevant: B leads (priority 0 > -1) and is read from its top
    assert first("move_to_front", pool, {A1: False}, seed) == B1
    # B's top item was relevant: B keeps the lead, its next item comes
    assert first("move_to_front", pool, {A1: False, B1: True}, seed) == B2
    # B then misses twice: A (-1) leads again over B (-2)
    assert first("move_to_front", pool, {A1: False, B1: True, B2: False, B3: False}, seed) == A2


@pytest.mark.parametrize("seed", range(4))
def test_maxmean_picks_the_best_ranked_item_of_the_arm_with_the_highest_posterior_mean(seed):
    # three systems: A ranks 0, 1, 2; B ranks 3, 4, 5; C ranks 6, 7, 8
    pool = PoolView.build(9, range(9), [0, 0, 0, 1, 1, 1, 2, 2, 2], [0] * 9, [1, 2, 3] * 3, num_systems=3,
                          num_questions=1)
    # A: 1 Y of 1 -> (1+1)/(2+1) = 0.667; B: nothing -> 0.5; C: 0 of 1 -> 0.333
    assert first("maxmean", pool, {0: True, 6: False}, seed) == 1
    # A: 1 Y, 1 N -> 2/4 = 0.5 = B's prior; C 0.333: A (rank 3) or B (rank 1) by the fixed system tie-break
    assert first("maxmean", pool, {0: True, 1: False, 6: False}, seed) in (2, 3)
    # A: 1 of 3 -> 0.4 < B's 0.5: B's top item
    assert first("maxmean", pool, {0: True, 1: False, 2: False, 6: False}, seed) == 3


def test_maxmean_per_question_keeps_one_bandit_per_question():
    # system A ranks items 0, 1 for question 0 and items 2, 3 for question 1; system B ranks 4 for question 0
    pool = PoolView.build(5, [0, 1, 2, 3, 4], [0, 0, 0, 0, 1], [0, 0, 1, 1, 0], [1, 2, 1, 2, 1], num_systems=2,
                          num_questions=2)
    labels = {0: True, 2: False}
    # one bandit: A has 1 of 2 (0.5) = B's prior (0.5); per question: (A, q0) has 1 of 1 (0.667) -> item 1
    assert first("maxmean_question", pool, labels) == 1
    # one global bandit with A at 0.5 and B at 0.5: either item 1 (A, rank 2) or 4 (B, rank 1), never A's q1 item 3
    assert first("maxmean", pool, labels) in (1, 4)
    # per question, (A, q1) has 0 of 1 (0.333) and loses to (B, q0) at 0.5 once (A, q0) misses too
    assert first("maxmean_question", pool, {0: True, 2: False, 1: False}) == 4


def test_kg_aware_starts_in_depth_order_more_systems_first():
    # items 0 (depth 2, one system), 1 (depth 1, one system), 2 (depth 1, two systems)
    pool = PoolView.build(3, [0, 1, 2, 2], [0, 1, 0, 1], [0, 0, 0, 0], [2, 1, 1, 1], num_systems=2, num_questions=1)
    assert order_items("kg_aware", pool, JudgingState.empty(3)).tolist() == [2, 1, 0]


def test_kg_aware_prefers_the_question_whose_items_were_relevant():
    # two questions of two relations, one system at rank 1..3 on each; question 0's first two items were Y,
    # question 1's first two N: question 0's third item comes before question 1's, whatever the tie-break
    items = list(range(6))
    pool = PoolView.build(6, items, [0] * 6, [0, 0, 0, 1, 1, 1], [1, 2, 3, 1, 2, 3], num_systems=1,
                          num_questions=2, question_relation=[0, 1], question_group=[0, 0], question_known=[1, 1])
    for seed in range(4):
        assert first("kg_aware", pool, {0: True, 1: True, 3: False, 4: False}, seed) == 2


def test_kg_aware_uses_how_many_answers_the_kg_knows_for_the_question():
    # four questions of one relation; questions 0 and 1 have many known answers, 2 and 3 none. Judged: the
    # rank-1 items of q0 (Y) and q2 (N). Among the unjudged rank-1 items of q1 and q3, q1's comes first.
    pool = PoolView.build(4, [0, 1, 2, 3], [0] * 4, [0, 1, 2, 3], [1] * 4, num_systems=1, num_questions=4,
                          question_relation=[0, 0, 0, 0], question_known=[30, 30, 0, 0])
    for seed in range(4):
        assert first("kg_aware", pool, {0: True, 2: False}, seed) == 1


def test_orders_never_return_judged_items_and_cover_the_rest():
    pool = two_runs()
    labels = {A1: True, B2: False}
    for order in ("random", "depth", "move_to_front", "maxmean", "maxmean_question", "kg_aware"):
        ordered = order_items(order, pool, JudgingState.from_labels(6, labels), seed=1).tolist()
        assert sorted(ordered) == [A2, A3, B1, B3], order


def test_items_without_a_system_are_kept_when_a_system_is_left_out():
    pool = PoolView.build(4, [0, 1, 1], [0, 0, 1], [0, 0, 0], [1, 2, 1], num_systems=2, num_questions=1,
                          depth=[1, 2, 3, 3])
    # item 0: only system 0; item 1: both; items 2, 3: no system hit (imported without systems): never dropped
    assert pool.items_without(0).tolist() == [False, True, True, True]
    assert pool.items_without([0, 1]).tolist() == [False, False, True, True]
    sub = pool.subset([1, 3])
    assert sub.num_items == 2 and sub.hit_item.tolist() == [0, 0] and sub.depth.tolist() == [1, 3]
