"""Leave-one-system-out (issue 20, Zobel 1998) on a pool where every number is computed by hand.

Three systems, one question, depth 3. The metric is precision of each system's three candidates against the
labels (unjudged = not relevant), which a reader checks in their head:

    A: a1 Y, a2 Y, s N          (s is shared with B)
    B: s N,  b1 Y, b2 N
    C: a1 Y, c1 N, c2 N          (a1 is shared with A)

Full labels: P(A) = 2/3, P(B) = 1/3, P(C) = 1/3. Leaving A out drops a2 (only A retrieved it; a1 stays through
C, s through B): P(A) = 1/3, A falls from place 1 to place 1 tied with B and C. Leaving B out drops b1, b2:
P(B) = 0 (place 3 -> 3). Leaving the family {A, C} out drops a1, a2, c1, c2: P(A) = 0, P(C) = 0.
"""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.judging_order import PoolView
from evaluation.core.reusability import leave_out, places

ITEMS = ["a1", "a2", "s", "b1", "b2", "c1", "c2"]
LABEL = np.array([1, 1, 0, 1, 0, 0, 0], dtype=bool)
RUNS = {0: ["a1", "a2", "s"], 1: ["s", "b1", "b2"], 2: ["a1", "c1", "c2"]}


@pytest.fixture
def pool() -> PoolView:
    hits = [(ITEMS.index(name), system, 0, rank) for system, names in RUNS.items()
            for rank, name in enumerate(names, start=1)]
    item, system, question, rank = map(list, zip(*hits))
    return PoolView.build(len(ITEMS), item, system, question, rank, num_systems=3, num_questions=1)


def precision(kept: np.ndarray) -> dict[str, np.ndarray]:
    relevant = LABEL & kept
    return {"P@3": np.array([sum(relevant[ITEMS.index(n)] for n in RUNS[s]) / 3 for s in range(3)])}


def test_leave_one_system_out_by_hand(pool):
    rows = leave_out(["A", "B", "C"], [("A", [0]), ("B", [1]), ("A+C", [0, 2])], pool.items_without, precision)
    got = {(r["group"], r["system"]): r for r in rows}
    a = got[("A", "A")]
    assert (a["full"], a["reduced"], a["items_left_out"]) == pytest.approx((2 / 3, 1 / 3, 1))
    assert (a["place_full"], a["place_reduced"]) == (1, 1)  # 1/3 ties B and C: they share place 1
    b = got[("B", "B")]
    assert (b["full"], b["reduced"], b["items_left_out"]) == pytest.approx((1 / 3, 0.0, 2))
    assert (b["place_full"], b["place_reduced"]) == (2, 3)
    assert b["relative_change"] == pytest.approx(-1.0)
    for system in ("A", "C"):
        assert got[("A+C", system)]["reduced"] == 0.0 and got[("A+C", system)]["items_left_out"] == 4
    # ranking full (2/3, 1/3, 1/3) vs without B (2/3, 0, 1/3): concordant pairs AB, AC, one tie BC in the full
    # ranking only -> tau-b = 2 / sqrt(2 * 3)
    assert b["tau_full_vs_reduced"] == pytest.approx(2 / np.sqrt(6))


def test_places_share_ties_and_follow_the_metric_direction():
    assert places(np.array([0.5, 0.7, 0.5]), "MRR").tolist() == [2, 1, 2]
    assert places(np.array([10.0, 3.0, 5.0]), "MR").tolist() == [3, 1, 2]
