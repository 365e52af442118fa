"""The report's summary helpers (evaluation.core.summary) without Django: metric directions, the best cell of each
column, the competition ranking of the systems and tau-b between the sparse and the completed ranking (checked
against a brute force over the system pairs), by hand."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from evaluation.core.summary import (
    LOWER_IS_BETTER,
    MIN_SYSTEMS_FOR_TAU,
    NO_BEST,
    Ranked,
    RankingSummary,
    best_rows,
    metric_direction,
    ranking,
    ranking_summary,
)


def brute_tau_b(x: list[float], y: list[float]) -> float:
    """(concordant - discordant) / sqrt((pairs - ties in x) (pairs - ties in y)), over every pair of systems."""
    concordant = discordant = ties_x = ties_y = pairs = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        pairs += 1
        dx, dy = x[i] - x[j], y[i] - y[j]
        ties_x += dx == 0
        ties_y += dy == 0
        concordant += dx * dy > 0
        discordant += dx * dy < 0
    return (concordant - discordant) / math.sqrt((pairs - ties_x) * (pairs - ties_y))


def test_the_documented_constants() -> None:
    assert MIN_SYSTEMS_FOR_TAU == 5
    assert LOWER_IS_BETTER == {"MR", "AMR", "GMR", "HMR", "MedR"}
    assert NO_BEST == {"RankStd", "RankVar", "RankMAD"}


@pytest.mark.parametrize("base", ["MR", "AMR", "GMR", "HMR", "MedR"])
def test_ranks_are_better_lower(base: str) -> None:
    assert metric_direction(base) == -1
    assert metric_direction(f"micro_{base}") == -1
    assert metric_direction(f"macro_{base}") == -1


@pytest.mark.parametrize("base", ["RankStd", "RankVar", "RankMAD"])
def test_spreads_have_no_direction(base: str) -> None:
    assert metric_direction(base) == 0
    assert metric_direction(f"micro_{base}") == 0
    assert metric_direction(f"macro_{base}") == 0


def test_other_metrics_are_better_higher() -> None:
    for metric in ("MRR", "micro_MRR", "macro_Hits@10", "map", "ndcg_cut_10", "P_5"):
        assert metric_direction(metric) == 1, metric
    # only a micro_ / macro_ prefix is taken off, and only the first underscore splits
    assert metric_direction("other_MR") == 1
    assert metric_direction("micro_MR_share") == 1
    assert metric_direction("macro_RankStd_x") == 1
    assert metric_direction("xmicro_MR") == 1


def test_best_rows_higher_and_lower_with_ties() -> None:
    values = [[0.5, 3.0], [0.7, 2.0], [0.7, 9.0], [0.1, 2.0]]
    assert best_rows(values, [1, -1]) == [{1, 2}, {1, 3}]
    assert best_rows(values, [-1, 1]) == [{3}, {2}]


def test_best_rows_skip_missing_cells() -> None:
    values = [[None, 2.0], [float("nan"), 1.0], [0.3, None], [0.2, float("nan")], [np.float64("nan"), 0.5]]
    assert best_rows(values, [1, 1]) == [{2}, {0}]
    assert best_rows(values, [-1, -1]) == [{3}, {4}]


def test_best_rows_none_without_a_choice() -> None:
    # no direction; one value only (the others missing); all values equal
    assert best_rows([[1.0], [2.0]], [0]) == [set()]
    assert best_rows([[1.0], [None], [float("nan")]], [1]) == [set()]
    assert best_rows([[2.0], [2.0], [None]], [1]) == [set()]
    assert best_rows([[2.0], [2.0], [2.0]], [-1]) == [set()]
    # two values are enough
    assert best_rows([[1.0], [None], [2.0]], [1]) == [{2}]
    assert best_rows([[1.0], [2.0]], [-1]) == [{0}]
    assert best_rows([], [1, -1]) == [set(), set()]
    # integer cells count as present
    assert best_rows([[0], [3]], [1]) == [{1}]


def test_ranking_competition_order_missing_last() -> None:
    values = {"d": 0.2, "a": 0.5, "c": 0.2, "b": 0.5, "e": 0.1, "z": None, "y": float("nan")}
    assert ranking(values, "MRR") == [
        Ranked(1, "a", 0.5), Ranked(1, "b", 0.5), Ranked(3, "c", 0.2), Ranked(3, "d", 0.2), Ranked(5, "e", 0.1),
        Ranked(6, "y", None), Ranked(6, "z", None)]
    assert ranking(values, "micro_MR") == [
        Ranked(1, "e", 0.1), Ranked(2, "c", 0.2), Ranked(2, "d", 0.2), Ranked(4, "a", 0.5), Ranked(4, "b", 0.5),
        Ranked(6, "y", None), Ranked(6, "z", None)]


def test_ranking_of_a_spread_is_highest_first() -> None:
    values = {"a": 2.0, "b": 5.0, "c": 1.0}
    assert [r.system for r in ranking(values, "RankStd")] == ["b", "a", "c"]
    assert [r.rank for r in ranking(values, "RankStd")] == [1, 2, 3]


def test_ranking_edge_cases() -> None:
    assert ranking({}, "MRR") == []
    assert ranking({"a": None, "b": None}, "MRR") == [Ranked(1, "a", None), Ranked(1, "b", None)]
    assert ranking({"a": 1.0}, "MRR") == [Ranked(1, "a", 1.0)]
    # a tie after a distinct first value keeps the rank of its first member
    assert ranking({"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0}, "MRR") == [
        Ranked(1, "a", 3.0), Ranked(2, "b", 1.0), Ranked(2, "c", 1.0), Ranked(2, "d", 1.0)]


def _tables(sparse: dict, completed: dict | None, metric: str = "micro_MRR") -> dict[str, list[dict]]:
    tables = {"sparse": [{"system": s, metric: v} for s, v in sparse.items()]}
    if completed is not None:
        tables["completed"] = [{"system": s, metric: v} for s, v in completed.items()]
    return tables


def test_ranking_summary_tau_against_the_brute_force() -> None:
    sparse = {"a": 0.5, "b": 0.3, "c": 0.42, "d": 0.1, "e": 0.25, "f": 0.35}
    completed = {"a": 0.41, "b": 0.47, "c": 0.45, "d": 0.12, "e": 0.2, "f": 0.3}
    summary = ranking_summary(_tables(sparse, completed), "micro_MRR")
    systems = list(sparse)
    assert summary.tau == pytest.approx(brute_tau_b([sparse[s] for s in systems], [completed[s] for s in systems]))
    assert summary.tau == pytest.approx(7 / 15)  # 11 concordant, 4 discordant pairs of 15
    assert summary.metric == "micro_MRR" and summary.systems == 6 and not summary.coarse
    assert summary.sparse == ranking(sparse, "micro_MRR") and summary.completed == ranking(completed, "micro_MRR")


def test_ranking_summary_tau_only_over_systems_present_on_both() -> None:
    sparse = {"a": 1.0, "b": 2.0, "c": 3.0, "d": None, "e": 5.0, "f": 4.0}
    completed = {"a": 1.0, "b": 3.0, "c": 2.0, "d": 9.0, "f": float("nan")}  # e absent, f NaN, d missing on sparse
    summary = ranking_summary(_tables(sparse, completed, "micro_MR"), "micro_MR")
    assert summary.tau == pytest.approx(brute_tau_b([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]))
    assert summary.tau == pytest.approx(1 / 3)
    assert summary.systems == 6 and summary.coarse is False


def test_ranking_summary_coarse_below_five_systems() -> None:
    four = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    summary = ranking_summary(_tables(four, {"a": 1.0, "b": 2.0, "c": 4.0, "d": 3.0}), "micro_MRR")
    assert summary.tau == pytest.approx(brute_tau_b([1, 2, 3, 4], [1, 2, 4, 3])) and summary.coarse is True
    five = {**four, "e": 5.0}
    summary = ranking_summary(_tables(five, {**four, "e": 0.5}), "micro_MRR")
    assert summary.tau == pytest.approx(brute_tau_b([1, 2, 3, 4, 5], [1, 2, 3, 4, 0.5])) and summary.coarse is False
    # without completed labels tau is None and the summary is never coarse, however few the systems
    summary = ranking_summary(_tables({"a": 1.0, "b": 2.0}, None), "micro_MRR")
    assert summary.tau is None and summary.coarse is False and summary.completed == []


def test_ranking_summary_two_shared_systems_are_enough() -> None:
    summary = ranking_summary(_tables({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 2.0, "b": 1.0, "c": None}), "micro_MRR")
    assert summary.tau == -1.0 and summary.coarse is True
    # one shared system: no tau
    summary = ranking_summary(_tables({"a": 1.0, "b": 2.0}, {"a": 2.0}), "micro_MRR")
    assert summary.tau is None and summary.coarse is False
    assert summary.completed == [Ranked(1, "a", 2.0)]


def test_ranking_summary_undefined_tau_is_none() -> None:
    # a constant completed ranking: tau-b is 0 / 0
    summary = ranking_summary(_tables({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 1.0, "c": 1.0}), "micro_MRR")
    assert summary.tau is None and summary.coarse is False


def test_ranking_summary_none_without_the_metric() -> None:
    assert ranking_summary({}, "micro_MRR") is None
    assert ranking_summary({"sparse": None, "completed": [{"system": "a", "micro_MRR": 1.0}]}, "micro_MRR") is None
    assert ranking_summary({"sparse": []}, "micro_MRR") is None
    assert ranking_summary(_tables({"a": 1.0}, {"a": 1.0}), "micro_MR") is None
    # the metric is looked up in the first sparse record; later records may lack it (a missing value)
    tables = {"sparse": [{"system": "a", "micro_MRR": 1.0}, {"system": "b"}], "completed": None}
    summary = ranking_summary(tables, "micro_MRR")
    assert summary.sparse == [Ranked(1, "a", 1.0), Ranked(2, "b", None)] and summary.completed == []
    assert summary.tau is None


def test_side_by_side_pads_the_shorter_list() -> None:
    summary = ranking_summary(_tables({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0}), "micro_MRR")
    assert summary.side_by_side == [(Ranked(1, "c", 3.0), Ranked(1, "a", 1.0)), (Ranked(2, "b", 2.0), None),
                                    (Ranked(3, "a", 1.0), None)]
    longer = RankingSummary("m", [Ranked(1, "a", 1.0)], [Ranked(1, "a", 1.0), Ranked(2, "b", 0.5)], None)
    assert longer.side_by_side == [(Ranked(1, "a", 1.0), Ranked(1, "a", 1.0)), (None, Ranked(2, "b", 0.5))]
    assert RankingSummary("m", [], [], None).side_by_side == []


def test_results_are_frozen() -> None:
    row = Ranked(1, "a", 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.rank = 2
    summary = RankingSummary("m", [row], [], None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.tau = 1.0
    assert (row.rank, row.system, row.value) == (1, "a", 1.0)
    assert (summary.metric, summary.sparse, summary.completed, summary.tau) == ("m", [row], [], None)
