"""Leave-systems-out (evaluation.core.reusability), the rules the hand-computed pool test leaves open (issue 19,
mutation testing): every field of every row on a pool with two metrics of opposite directions, the row order,
the metric selection, places with ties, a zero full value, one and two systems. The score function is a small
formula of the kept items, so every number below is worked out by hand."""
from __future__ import annotations

import math

import numpy as np

from evaluation.core.reusability import leave_out, places

# items 0..3: item 0 only system 0 retrieved, item 1 only system 1, items 2 and 3 several systems
OWNER = {0: 0, 1: 1}


def kept_items(members) -> np.ndarray:
    kept = np.ones(4, dtype=bool)
    for item, owner in OWNER.items():
        if owner in members:
            kept[item] = False
    return kept


def score(kept: np.ndarray) -> dict[str, np.ndarray]:
    k = kept.astype(float)
    return {"acc": np.array([(k[0] + k[2]) / 2, (k[1] + k[3]) / 2, 0.5]),
            "MR": np.array([4 - 2 * k[0], 3 - k[1], 2.0])}


def row(group, system, metric, left_out, full, reduced, change, relative, place_full, place_reduced, tau) -> dict:
    return {"group": group, "system": system, "metric": metric, "items_left_out": left_out, "full": full,
            "reduced": reduced, "change": change, "relative_change": relative, "place_full": place_full,
            "place_reduced": place_reduced, "tau_full_vs_reduced": tau}


def same_rows(got: list[dict], expected: list[dict]) -> bool:
    if len(got) != len(expected):
        return False
    for a, b in zip(got, expected):
        if set(a) != set(b):
            return False
        for key in a:
            x, y = a[key], b[key]
            if isinstance(y, float) and math.isnan(y):
                if not (isinstance(x, float) and math.isnan(x)):
                    return False
            elif type(x) is not type(y) or not (math.isclose(x, y, rel_tol=1e-12) if isinstance(y, float) else x == y):
                return False
    return True


def test_every_row_by_hand() -> None:
    calls = []

    def recording_kept_items(members):
        calls.append(members)
        return kept_items(members)

    rows = leave_out(["S0", "S1", "S2"], [("x", [0]), ("yz", (1, 2))], recording_kept_items, score)
    assert calls == [[], [0], [1, 2]] and all(type(call) is list for call in calls)
    nan = float("nan")
    # full: acc 1, 1, 0.5 and MR 2, 2, 2. Without system 0 (item 0 gone): acc 0.5, 1, 0.5 and MR 4, 2, 2;
    # acc tau-b: pairs (0, 1) tied / discordant-free, (0, 2) concordant / tied, (1, 2) concordant: 1 / sqrt(2 * 2);
    # MR constant before: tau undefined. Without 1 and 2 (item 1 gone): acc 1, 0.5, 0.5 and MR 2, 3, 2.
    expected = [
        row("x", "S0", "acc", 1, 1.0, 0.5, -0.5, -0.5, 1, 2, 0.5),
        row("x", "S0", "MR", 1, 2.0, 4.0, 2.0, 1.0, 1, 3, nan),
        row("yz", "S1", "acc", 1, 1.0, 0.5, -0.5, -0.5, 1, 2, 0.5),
        row("yz", "S2", "acc", 1, 0.5, 0.5, 0.0, 0.0, 3, 2, 0.5),
        row("yz", "S1", "MR", 1, 2.0, 3.0, 1.0, 0.5, 1, 3, nan),
        row("yz", "S2", "MR", 1, 2.0, 2.0, 0.0, 0.0, 1, 1, nan),
    ]
    assert same_rows(rows, expected), rows
    only_mr = leave_out(["S0", "S1", "S2"], [("x", [0]), ("yz", (1, 2))], kept_items, score, metrics=("MR",))
    assert same_rows(only_mr, [expected[1], expected[4], expected[5]])
    assert leave_out(["S0", "S1", "S2"], [], kept_items, score) == []


def test_zero_full_value_one_and_two_systems() -> None:
    nan = float("nan")
    # one system scoring 0: no relative change, no tau (a single system has no ranking)
    rows = leave_out(["A"], [("A", [0])], lambda members: np.array([not members]),
                     lambda kept: {"P@1": np.array([0.0])})
    assert same_rows(rows, [row("A", "A", "P@1", 1, 0.0, 0.0, 0.0, nan, 1, 1, nan)])
    # two systems swapping places: tau-b -1; an MR-like metric ranks the other way round
    rows = leave_out(["A", "B"], [("A", [0])], lambda members: np.array([not members, True]),
                     lambda kept: {"hits": np.array([1.0, 0.0]) if kept.all() else np.array([0.0, 1.0]),
                                   "mean_rank": np.array([1.0, 3.0]) if kept.all() else np.array([4.0, 3.0])})
    assert same_rows(rows, [row("A", "A", "hits", 1, 1.0, 0.0, -1.0, -1.0, 1, 2, -1.0),
                            row("A", "A", "mean_rank", 1, 1.0, 4.0, 3.0, 3.0, 1, 2, -1.0)])


def test_score_fn_alias() -> None:
    from collections.abc import Callable, Mapping

    from evaluation.core import reusability
    assert reusability.ScoreFn == Callable[[np.ndarray], Mapping[str, np.ndarray]]


def test_places() -> None:
    assert places(np.array([0.5, 0.7, 0.5, 0.9]), "Hits@10").tolist() == [3, 2, 3, 1]
    assert places(np.array([0.5, 0.7, 0.5, 0.9]), "MR_filtered").tolist() == [1, 3, 1, 4]
    assert places(np.array([2, 2, 2]), "MR").tolist() == [1, 1, 1]
    assert places(np.array([-1.0, 1.0]), "MRR").tolist() == [2, 1]
    assert places(np.array([-1.0, 1.0]), "mean_rank").tolist() == [1, 2]
    assert places(np.array([], dtype=float), "MRR").tolist() == []
