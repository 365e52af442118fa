"""annotation/lib/judging_progress.py without Django (issue 19): the estimate of the positives still unjudged, the
distinct (system, item) pairs, pool precision and the ranking's stability, each against a plain-Python reference
(loops over the hits, Fractions, a pair-counting tau-b) on seeded random pools and on edge cases by hand."""
from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from annotation.lib.judging_order import JudgingState, PoolView
from annotation.lib.judging_progress import (pool_precision, ranking_stability, retrieved_pairs,
                                             unjudged_positives_estimate)


def random_pool(seed: int, *, num_items=None, num_systems=None):
    rng = np.random.default_rng(seed)
    n = num_items if num_items is not None else int(rng.integers(1, 12))
    systems = num_systems if num_systems is not None else int(rng.integers(1, 5))
    hits = int(rng.integers(0, 3 * n + 1))
    item = rng.integers(0, n, hits)
    system = rng.integers(0, systems, hits)
    question = rng.integers(0, 3, hits)
    rank = rng.integers(1, 6, hits)
    pool = PoolView.build(n, item, system, question, rank, num_systems=systems, num_questions=3)
    judged = rng.random(n) < 0.5
    positive = judged & (rng.random(n) < 0.5)
    # labels that are not final must not count: set some "positive" bits on unjudged items
    noisy_positive = positive | (~judged & (rng.random(n) < 0.3))
    return pool, judged, positive, noisy_positive, rng


def hits(pool):
    return list(zip(pool.hit_item.tolist(), pool.hit_system.tolist(), pool.hit_rank.tolist()))


def reference_estimate(pool, judged, positive) -> Fraction:
    cells: dict[tuple[int, int], list[int]] = {}
    for item, system, rank in hits(pool):
        counts = cells.setdefault((system, rank), [0, 0])
        if judged[item]:
            counts[0] += 1
            counts[1] += bool(positive[item])
    best: dict[int, Fraction] = {}
    for item, system, rank in hits(pool):
        judged_count, positive_count = cells[(system, rank)]
        chance = Fraction(positive_count + 1, judged_count + 2)
        best[item] = max(best.get(item, Fraction(0)), chance)
    return sum((chance for item, chance in best.items() if not judged[item]), Fraction(0))


def reference_precision(pool, judged, positive) -> list[Fraction]:
    retrieved = {system: set() for system in range(pool.num_systems)}
    for item, system, _ in hits(pool):
        retrieved[system].add(item)
    return [Fraction(sum(1 for i in items if judged[i] and positive[i]), max(len(items), 1))
            for _, items in sorted(retrieved.items())]


def reference_tau_b(x, y) -> float:
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tied_x += 1
        elif dy == 0:
            tied_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


@pytest.mark.parametrize("seed", range(40))
def test_estimate_is_the_best_smoothed_cell_yield_summed_over_unjudged_items(seed):
    pool, judged, positive, noisy, _ = random_pool(seed)
    expected = reference_estimate(pool, judged, positive)
    assert unjudged_positives_estimate(pool, JudgingState(judged, noisy)) == pytest.approx(float(expected), abs=1e-12)


def test_estimate_edge_cases():
    # no hit at all: nothing to estimate, even with unjudged items
    empty = PoolView.build(3, [], [], [], [], num_systems=2, num_questions=1)
    assert unjudged_positives_estimate(empty, JudgingState.empty(3)) == 0.0
    # an item without hits counts 0; one hit at rank 1 of an untouched cell counts 1/2
    pool = PoolView.build(2, [1], [0], [0], [1], num_systems=1, num_questions=1)
    assert unjudged_positives_estimate(pool, JudgingState.empty(2)) == 0.5
    # a pool whose system count is 0 (hits of system 0 all the same): one cell per rank
    pool = PoolView.build(2, [0, 1], [0, 0], [0, 0], [2, 2], num_systems=0, num_questions=1)
    state = JudgingState(np.array([True, False]), np.array([True, False]))
    assert unjudged_positives_estimate(pool, state) == pytest.approx(2 / 3)
    # the rank is part of the cell: a positive at rank 1 does not raise the rank-2 cell; the result is a float
    pool = PoolView.build(3, [0, 1, 2], [0, 0, 0], [0, 0, 0], [1, 1, 2], num_systems=1, num_questions=1)
    value = unjudged_positives_estimate(pool, JudgingState(np.array([True, False, False]),
                                                           np.array([True, False, False])))
    assert type(value) is float and value == pytest.approx(2 / 3 + 1 / 2)


@pytest.mark.parametrize("seed", range(40))
def test_retrieved_pairs_are_the_distinct_pairs_by_system_then_item(seed):
    pool, judged, positive, noisy, _ = random_pool(seed)
    system, item = retrieved_pairs(pool)
    expected = sorted({(s, i) for i, s, _ in hits(pool)})
    assert list(zip(system.tolist(), item.tolist())) == expected


def test_retrieved_pairs_of_no_hit_and_of_no_item():
    system, item = retrieved_pairs(PoolView.build(0, [], [], [], [], num_systems=2, num_questions=0))
    assert system.size == 0 and item.size == 0
    # one item: item 0 of systems 2 and 0 (the divisor is max(num_items, 1) = 1)
    system, item = retrieved_pairs(PoolView.build(1, [0, 0, 0], [2, 0, 2], [0, 0, 0], [1, 1, 3], num_systems=3,
                                                  num_questions=1))
    assert (system.tolist(), item.tolist()) == ([0, 2], [0, 0])


@pytest.mark.parametrize("seed", range(40))
def test_pool_precision_counts_final_positives_among_distinct_items(seed):
    pool, judged, positive, noisy, _ = random_pool(seed)
    expected = [float(value) for value in reference_precision(pool, judged, positive)]
    assert pool_precision(pool, judged, noisy).tolist() == pytest.approx(expected, abs=1e-15)
    assert pool_precision(pool, judged, noisy, retrieved_pairs(pool)).tolist() == pytest.approx(expected, abs=1e-15)


def test_pool_precision_of_a_system_without_hits_is_zero():
    # systems 0 and 2 retrieve nothing; system 1 retrieves item 0 twice (two questions) and item 1
    pool = PoolView.build(2, [0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 2, 1], num_systems=3, num_questions=2)
    precision = pool_precision(pool, np.array([True, True]), np.array([True, False]))
    assert precision.tolist() == [0.0, 0.5, 0.0]


@pytest.mark.parametrize("seed", range(30))
def test_stability_rows_against_a_reference(seed):
    pool, _, _, _, rng = random_pool(seed, num_items=int(np.random.default_rng(seed).integers(3, 12)))
    truth = rng.random(pool.num_items) < 0.5
    sequence = rng.permutation(pool.num_items)[:int(rng.integers(0, pool.num_items + 1))]
    step, points = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    rows = ranking_stability(pool, sequence, truth, step=step, points=points)
    counts = [c for c in (sequence.size - k * step for k in range(points + 1)) if c >= 0]
    assert [(row["labels"], row["previous"]) for row in rows] == list(zip(counts, counts[1:]))

    def precision(count):
        judged = np.zeros(pool.num_items, dtype=bool)
        judged[sequence[:count]] = True
        return reference_precision(pool, judged, truth)

    for row in rows:
        expected = reference_tau_b(precision(row["labels"]), precision(row["previous"]))
        if pool.num_systems < 2 or math.isnan(expected):
            assert math.isnan(row["tau"])
        else:
            assert row["tau"] == pytest.approx(expected, abs=1e-12)


def test_stability_defaults_and_edges():
    # the defaults (step 200, 6 points) on 450 labels: 3 systems of 150 items each
    n = 450
    pool = PoolView.build(n, range(n), np.arange(n) // 150, [0] * n, [1] * n, num_systems=3, num_questions=1)
    truth = np.arange(n) % 3 == np.arange(n) // 150  # system s: items with i % 3 == s positive
    rows = ranking_stability(pool, np.arange(n), truth)  # step 200, points 6: 450, 250, 50
    assert [(row["labels"], row["previous"]) for row in rows] == [(450, 250), (250, 50)]
    # enough labels for every point: 6 rows, 200 labels apart, the newest first
    n = 1500
    pool = PoolView.build(n, range(n), np.arange(n) % 3, [0] * n, [1] * n, num_systems=3, num_questions=1)
    rows = ranking_stability(pool, np.arange(n), np.arange(n) % 7 == 0)
    assert [(row["labels"], row["previous"]) for row in rows] == [(1500 - 200 * k, 1300 - 200 * k) for k in range(6)]
    # one system: no ranking to compare
    one = PoolView.build(3, [0, 1, 2], [0, 0, 0], [0, 0, 0], [1, 2, 3], num_systems=1, num_questions=1)
    rows = ranking_stability(one, [0, 1, 2], np.array([True, False, True]), step=1, points=2)
    assert [(row["labels"], row["previous"]) for row in rows] == [(3, 2), (2, 1)]
    assert all(math.isnan(row["tau"]) for row in rows)
    # exactly `step` labels: the row against 0 labels is there (a count of 0 is kept)
    two = PoolView.build(2, [0, 1], [0, 1], [0, 0], [1, 1], num_systems=2, num_questions=1)
    rows = ranking_stability(two, [1, 0], np.array([True, True]), step=1, points=5)
    assert [(row["labels"], row["previous"]) for row in rows] == [(2, 1), (1, 0)]
    # after 2: (1, 1); after 1: (0, 1); after 0: (0, 0)
    assert math.isnan(rows[0]["tau"]) and math.isnan(rows[1]["tau"])
    # points = 1: a single row; a sequence given as a list of numpy ints
    # (after 2 labels (0, 1), after 1 (0, 1): the same order)
    rows = ranking_stability(two, [np.int32(1), np.int32(0)], np.array([False, True]), step=1, points=1)
    assert [(row["labels"], row["previous"]) for row in rows] == [(2, 1)]
    assert rows[0]["tau"] == pytest.approx(1.0)
