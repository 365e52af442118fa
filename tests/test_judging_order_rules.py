"""annotation/lib/judging_order.py without Django (issue 19): every order's full sequence on seeded random pools
against a plain-Python reference written from the module doc (each item's best hit compared as a tuple, Fractions
for the posterior means, the kg_aware log-odds summed term by term), the tie-breaks' shape, the partial
selection (``limit``), and the whole error message."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from annotation.lib import judging_order as lib
from annotation.lib.judging_order import JudgingState, OrderError, PoolView, order_items, order_keys
from tests._raises_support import whole


def random_pool(seed: int, *, with_kg: bool = True, num_systems=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    systems = num_systems if num_systems is not None else int(rng.integers(1, 5))
    questions = int(rng.integers(1, 4))
    hits = int(rng.integers(0, 3 * n + 1))
    item = rng.integers(0, n, hits)
    system = rng.integers(0, systems, hits)
    question = rng.integers(0, questions, hits)
    rank = rng.choice([1, 2, 3, 4, 5, 9, 10, 11, 60, 150], hits)
    extra = {}
    if with_kg:
        relations = rng.integers(0, 3, questions)
        extra = dict(question_relation=relations, question_group=relations % 2 + rng.integers(0, 2) * 2,
                     question_known=rng.choice([0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 64, 65, 100], questions))
        if seed % 3 == 0:  # one group per relation (the hierarchy as the service builds it)
            extra["question_group"] = relations % 2
    pool = PoolView.build(n, item, system, question, rank, num_systems=systems, num_questions=questions,
                          depth=rng.integers(1, 20, n), **extra)
    judged = rng.random(n) < rng.random()
    positive = judged & (rng.random(n) < rng.random())
    return pool, JudgingState(judged, positive), rng


def hits(pool):
    return list(zip(pool.hit_item.tolist(), pool.hit_system.tolist(), pool.hit_question.tolist(),
                    pool.hit_rank.tolist()))


def arm_counts(pool, state, arm_of) -> dict:
    """(judged, positive) distinct items per arm."""
    items: dict = {}
    for item, system, question, rank in hits(pool):
        items.setdefault(arm_of(system, question, rank), set()).add(item)
    return {arm: (sum(bool(state.judged[i]) for i in members),
                  sum(bool(state.judged[i] and state.positive[i]) for i in members)) for arm, members in items.items()}


def reference_arm_order(pool, state, seed, arm_of, value_of):
    """Best hit per item by (its arm's value, the system tie-break, the better rank); items without hits last."""
    counts = arm_counts(pool, state, arm_of)
    systems_tiebreak = lib._system_tiebreak(pool.num_systems, seed)
    best: dict[int, tuple] = {}
    for item, system, question, rank in hits(pool):
        judged, positive = counts[arm_of(system, question, rank)]
        key = (value_of(judged, positive), int(systems_tiebreak[system]), -rank)
        best[item] = max(best.get(item, key), key)
    return lambda item: (1,) + best[item] if item in best else (0,)


def order_by(pool, state, seed, key):
    ties = lib.tiebreak(pool.num_items, seed)
    unjudged = [i for i in range(pool.num_items) if not state.judged[i]]
    return sorted(unjudged, key=lambda i: (key(i), int(ties[i])), reverse=True)


def reference_order(order, pool, state, seed):
    if order == "random":
        return order_by(pool, state, seed, lambda i: 0)
    if order == "depth":
        return order_by(pool, state, seed, lambda i: -int(pool.depth[i]))
    if order == "move_to_front":
        key = reference_arm_order(pool, state, seed, lambda s, q, r: s, lambda j, p: -(j - p))
    elif order == "maxmean":
        key = reference_arm_order(pool, state, seed, lambda s, q, r: s, lambda j, p: Fraction(1 + p, 2 + j))
    else:  # maxmean_question
        key = reference_arm_order(pool, state, seed, lambda s, q, r: (q, s), lambda j, p: Fraction(1 + p, 2 + j))
    return order_by(pool, state, seed, key)


@pytest.mark.parametrize("order", ["random", "depth", "move_to_front", "maxmean", "maxmean_question"])
@pytest.mark.parametrize("seed", range(25))
def test_each_order_against_a_reference(order, seed):
    pool, state, _ = random_pool(seed, with_kg=False)
    assert order_items(order, pool, state, seed=seed).tolist() == reference_order(order, pool, state, seed)


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p) - math.log1p(-p)


def band(value: int, bounds) -> int:
    return sum(1 for bound in bounds if bound < value)


def reference_kg_scores(pool, state) -> list[float]:
    n = pool.num_items
    judged = [bool(state.judged[i]) for i in range(n)]
    positive = [bool(state.judged[i] and state.positive[i]) for i in range(n)]
    base = (sum(positive) + 1.0) / (sum(judged) + 2.0)
    base_logit = logit(base)
    # each item's question: the question of its best-ranked hit (the first of equal ranks), 0 without hits
    question = [0] * n
    best_rank: dict[int, int] = {}
    for item, _, q, rank in hits(pool):
        if item not in best_rank or rank < best_rank[item]:
            best_rank[item], question[item] = rank, q

    def rate(group_of, prior_of):
        counts: dict = {}
        for i in range(n):
            j, p = counts.get(group_of(i), (0, 0))
            counts[group_of(i)] = (j + judged[i], p + positive[i])

        def shrunk(group):
            j, p = counts.get(group, (0, 0))
            return (p + lib.SHRINK * prior_of(group)) / (j + lib.SHRINK)
        return shrunk

    group_of_question = pool.question_group.tolist()
    relation_of_question = pool.question_relation.tolist()
    group_rate = rate(lambda i: group_of_question[question[i]], lambda g: base)
    group_of_relation = {relation_of_question[question[i]]: group_of_question[question[i]] for i in range(n)}
    relation_rate = rate(lambda i: relation_of_question[question[i]],
                         lambda r: group_rate(group_of_relation.get(r, 0)))
    question_rate = rate(lambda i: question[i], lambda q: relation_rate(relation_of_question[q]))
    scores = [logit(question_rate(question[i])) for i in range(n)]
    # the best (system x rank band) lift among the item's hits
    cells = arm_counts(pool, state, lambda s, q, r: (s, band(r, lib.RANK_BANDS)))
    lifts: dict[int, float] = {}
    for item, system, _, rank in hits(pool):
        j, p = cells[(system, band(rank, lib.RANK_BANDS))]
        lift = logit((p + lib.SHRINK * base) / (j + lib.SHRINK)) - base_logit
        lifts[item] = max(lifts.get(item, -math.inf), lift)
    systems: dict[int, set] = {}
    for item, system, _, _ in hits(pool):
        systems.setdefault(item, set()).add(system)
    votes = [len(systems.get(i, ())) for i in range(n)]
    vote_rate = rate(lambda i: votes[i], lambda v: base)
    known = [band(int(pool.question_known[question[i]]), lib.KNOWN_BANDS) for i in range(n)]
    known_rate = rate(lambda i: known[i], lambda k: base)
    for i in range(n):
        scores[i] += lifts.get(i, 0.0)
        scores[i] += logit(vote_rate(votes[i])) - base_logit
        scores[i] += logit(known_rate(known[i])) - base_logit
    return scores


@pytest.mark.parametrize("seed", range(40))
def test_kg_aware_scores_against_a_reference(seed):
    pool, state, _ = random_pool(seed)
    assert lib.kg_aware_scores(pool, state).tolist() == pytest.approx(reference_kg_scores(pool, state), abs=1e-9)


@pytest.mark.parametrize("seed", range(25))
def test_kg_aware_order_is_by_score_then_shallower_then_more_systems(seed):
    pool, state, _ = random_pool(seed)
    scores = np.round(lib.kg_aware_scores(pool, state), 9).tolist()
    votes = [len({s for i, s, _, _ in hits(pool) if i == item}) for item in range(pool.num_items)]
    expected = order_by(pool, state, seed, lambda i: (scores[i], -int(pool.depth[i]), votes[i]))
    assert order_items("kg_aware", pool, state, seed=seed).tolist() == expected


def test_kg_aware_with_no_judgment_and_no_hit():
    # no hit: score from the priors alone (every rate 1/2, all lifts 0), order by depth
    pool = PoolView.build(3, [], [], [], [], num_systems=0, num_questions=1, depth=[3, 1, 2])
    assert lib.kg_aware_scores(pool, JudgingState.empty(3)).tolist() == [0.0, 0.0, 0.0]
    assert order_items("kg_aware", pool, JudgingState.empty(3)).tolist() == [1, 2, 0]
    # an empty pool (no item, no question)
    empty = PoolView.build(0, [], [], [], [], num_systems=0, num_questions=0)
    assert lib.kg_aware_scores(empty, JudgingState.empty(0)).tolist() == []
    assert lib.kg_aware_keys(empty, JudgingState.empty(0)).tolist() == []


def test_the_rank_and_known_bands():
    assert lib.RANK_BANDS == (1, 2, 3, 5, 10, 20, 50, 100)
    assert lib.KNOWN_BANDS == (0, 1, 2, 4, 8, 16, 64)
    assert lib.SHRINK == 8.0
    ranks = np.array([1, 2, 3, 4, 5, 6, 10, 11, 20, 21, 50, 51, 100, 101, 10**6])
    assert lib._band(ranks, lib.RANK_BANDS).tolist() == [band(int(r), lib.RANK_BANDS) for r in ranks]
    assert lib._band(ranks, lib.RANK_BANDS).tolist() == [0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]
    assert lib._band(np.array([0, 1, 2, 3, 4, 64, 65]), lib.KNOWN_BANDS).dtype == np.int64


def test_logit_is_clipped_away_from_0_and_1():
    assert lib._logit(0.5) == 0.0
    assert float(lib._logit(0.0)) == pytest.approx(math.log(1e-6) - math.log1p(-1e-6), rel=1e-12)
    high = 1 - 1e-6
    assert float(lib._logit(1.0)) == pytest.approx(math.log(high) - math.log1p(-high), rel=1e-12)
    assert float(lib._logit(1.0)) == pytest.approx(13.8155, abs=1e-4)  # log(999999)
    assert float(lib._logit(0.2)) == pytest.approx(math.log(0.25), rel=1e-12)


def test_the_orders_and_the_unknown_order_error():
    assert lib.ORDERS == ("random", "depth", "move_to_front", "maxmean", "maxmean_question", "kg_aware", "cal",
                          "cal_top", "cal_mix")
    assert lib.ADAPTIVE_ORDERS == tuple(order for order in lib.ORDERS if order not in ("random", "depth"))
    pool, state, _ = random_pool(1)
    with pytest.raises(OrderError, match=whole(
            "unknown judging order 'sideways'; orders: random, depth, move_to_front, maxmean, maxmean_question, "
            "kg_aware, cal, cal_top, cal_mix")):
        order_keys("sideways", pool, state)


def test_random_and_depth_keys():
    pool = PoolView.build(4, [0, 1], [0, 0], [0, 0], [2, 5], num_systems=1, num_questions=1, depth=[9, 9, 3, 7])
    keys = order_keys("random", pool, JudgingState.empty(4))
    assert keys.tolist() == [0, 0, 0, 0] and keys.dtype == np.int64
    # depths 2, 5, 3, 7: key = 7 - depth
    assert order_keys("depth", pool, JudgingState.empty(4)).tolist() == [5, 2, 4, 0]


def test_arm_orders_with_no_hit_give_zero_keys():
    pool = PoolView.build(3, [], [], [], [], num_systems=2, num_questions=1)
    for order in ("move_to_front", "maxmean", "maxmean_question"):
        keys = order_keys(order, pool, JudgingState.empty(3))
        assert keys.tolist() == [0, 0, 0] and keys.dtype == np.int64, order


@pytest.mark.parametrize("num_items, seed", [(1, 0), (5, 3), (40, 11)])
def test_tiebreaks_are_seeded_permutations(num_items, seed):
    ties = lib.tiebreak(num_items, seed)
    assert sorted(ties.tolist()) == list(range(num_items)) and ties.dtype == np.int64
    assert lib.tiebreak(num_items, seed).tolist() == ties.tolist()
    systems = lib._system_tiebreak(num_items, seed)
    assert sorted(systems.tolist()) == list(range(num_items)) and systems.dtype == np.int64
    assert lib._system_tiebreak(0, seed).tolist() == [0]
    if num_items > 5:
        assert lib.tiebreak(num_items, seed + 1).tolist() != ties.tolist()
        assert lib._system_tiebreak(num_items, seed + 1).tolist() != systems.tolist()


@pytest.mark.parametrize("order", ["random", "depth", "move_to_front", "maxmean", "kg_aware"])
@pytest.mark.parametrize("seed", range(6))
def test_limit_among_and_ties_select_the_head_of_the_full_order(order, seed):
    pool, state, rng = random_pool(seed)
    full = order_items(order, pool, state, seed=seed).tolist()
    for limit in range(len(full) + 2):
        assert order_items(order, pool, state, seed=seed, limit=limit).tolist() == full[:limit]
    among = rng.permutation(pool.num_items)[:int(rng.integers(0, pool.num_items + 1))]
    everything = order_items(order, pool, JudgingState.empty(pool.num_items), seed=seed).tolist()
    chosen = set(among.tolist())
    # `among` may include judged items: they are ordered with the rest by the same keys
    keys = order_keys(order, pool, state, seed)
    ties = lib.tiebreak(pool.num_items, seed)
    expected = sorted(chosen, key=lambda i: (int(keys[i]), int(ties[i])), reverse=True)
    assert order_items(order, pool, state, seed=seed, among=among).tolist() == expected
    assert sorted(everything) == list(range(pool.num_items))
    # own tie-breaks: the reverse of the seeded ones
    reverse = pool.num_items - 1 - ties
    expected = sorted(chosen, key=lambda i: (int(keys[i]), int(reverse[i])), reverse=True)
    assert order_items(order, pool, state, seed=seed, among=among, ties=reverse).tolist() == expected


def test_nothing_left_to_judge():
    pool = PoolView.build(2, [0, 1], [0, 0], [0, 0], [1, 2], num_systems=1, num_questions=1)
    done = JudgingState(np.array([True, True]), np.array([True, False]))
    for order in ("random", "depth", "maxmean"):
        assert order_items(order, pool, done).tolist() == []
        assert order_items(order, pool, done, limit=1).tolist() == []


@pytest.mark.parametrize("seed", range(8))
def test_orders_that_share_one_view_agree_with_fresh_views(seed):
    # the arm pairs kept on the view (one entry per kind of arm) must not leak from one order to another
    shared, state, _ = random_pool(seed)
    for order in ("move_to_front", "maxmean_question", "maxmean", "kg_aware", "move_to_front", "maxmean_question"):
        fresh, _, _ = random_pool(seed)
        assert order_keys(order, shared, state, seed).tolist() == order_keys(order, fresh, state, seed).tolist(), order


def test_an_item_without_hits_comes_after_every_item_with_one():
    # one system: items 0 (rank 1) and 1 (rank 2, the smallest key a hit can get: 0) have hits, item 2 none
    pool = PoolView.build(3, [0, 1], [0, 0], [0, 0], [1, 2], num_systems=1, num_questions=1, depth=[1, 2, 1])
    for order in ("move_to_front", "maxmean", "maxmean_question"):
        for seed in range(6):
            assert order_items(order, pool, JudgingState.empty(3), seed=seed).tolist() == [0, 1, 2], (order, seed)


@pytest.mark.parametrize("limit", [1, 2, 3, 10, 100, 1999, 2000])
def test_limit_on_a_large_pool_is_the_head_of_the_full_order(limit):
    # 2,000 items at distinct depths in a shuffled order: small arrays are partitioned like a full sort, large not
    rng = np.random.default_rng(limit)
    n = 2000
    pool = PoolView.build(n, range(n), [0] * n, [0] * n, rng.permutation(n) + 1, num_systems=1, num_questions=1)
    full = order_items("depth", pool, JudgingState.empty(n), seed=1).tolist()
    assert full == np.argsort(pool.depth, kind="stable").tolist()
    assert order_items("depth", pool, JudgingState.empty(n), seed=1, limit=limit).tolist() == full[:limit]
