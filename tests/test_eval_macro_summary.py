"""trec_eval's "all" row (mean_over_queries) and the measure-name helpers of evaluation.core.macro, by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.core.macro import (
    UnknownMeasureError,
    evaluate,
    expand_measures,
    mean_over_queries,
    parse_measure,
)
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec
from tests._raises_support import whole

# q0: n then r (R = 1): AP 1/2, first relevant at rank 2
# q1: judged all non-relevant (R = 0): AP 0, no relevant rank
# q2: r at rank 1, r2 never retrieved (R = 2): AP (1/1) / 2 = 1/2, first relevant at rank 1
QRELS = {"q0": {"r": 1, "n": 0}, "q1": {"x": 0}, "q2": {"r": 1, "r2": 1}}
RUN = {"q0": {"n": 2.0, "r": 1.0}, "q1": {"x": 1.0, "y": 0.5}, "q2": {"r": 1.0}}
MEASURES = ["relstring", "num_ret", "num_rel", "map", "gm_map", "gm_bpref", "MR"]  # a string measure first: skipped, not the end


def _judged():
    return judged_ranking_from_trec(Qrels.from_dict(QRELS), Run.from_dict(RUN))


def test_summary_hand_case() -> None:
    judged = _judged()
    per_query = evaluate(judged, MEASURES)
    assert per_query["map"].tolist() == [0.5, 0.0, 0.5]
    summary = mean_over_queries(per_query, judged)
    assert "relstring" not in summary  # a string per query has no mean
    assert summary["num_ret"] == 5 and summary["num_rel"] == 3  # sums, not means
    assert summary["map"] == pytest.approx(1 / 3)  # q1 counts with 0
    # geometric mean of max(AP, 0.00001), trec_eval's floor
    assert summary["gm_map"] == pytest.approx((0.5 * 0.00001 * 0.5) ** (1 / 3))
    assert summary["MR"] == pytest.approx((2 + 1) / 2)  # only the queries with a relevant document
    # bpref: q0 0 (its one non-relevant is above r), q1 0, q2 (1 - 0) / R = 1/2; geometric mean with the floor
    assert summary["gm_bpref"] == pytest.approx((0.00001 * 0.00001 * 0.5) ** (1 / 3))


def test_summary_only_with_relevant() -> None:
    judged = _judged()
    summary = mean_over_queries(evaluate(judged, MEASURES), judged, only_with_relevant=True)
    assert summary["num_ret"] == 3 and summary["num_rel"] == 3  # q0 and q2
    assert summary["map"] == pytest.approx(0.5) and summary["gm_map"] == pytest.approx(0.5)
    assert summary["MR"] == pytest.approx(1.5)


def test_summary_of_no_selected_query_is_zero() -> None:
    judged = judged_ranking_from_trec(Qrels.from_dict({"q1": QRELS["q1"]}), Run.from_dict({"q1": RUN["q1"]}))
    per_query = evaluate(judged, ["map", "P_5", "MR", "num_ret"])
    assert math.isnan(per_query["MR"][0])
    assert mean_over_queries(per_query, judged) == {"map": 0.0, "P_5": 0.0, "MR": 0.0, "num_ret": 2.0}
    assert mean_over_queries(per_query, judged, only_with_relevant=True) == {
        "map": 0.0, "P_5": 0.0, "MR": 0.0, "num_ret": 0.0}


def test_measure_names() -> None:
    assert parse_measure("P_10") == ("P", 10)
    assert parse_measure("ndcg_cut_20") == ("ndcg_cut", 20)
    assert parse_measure("map") == ("map", None)
    assert expand_measures(["P.5,10", "map"]) == ["map", "P_5", "P_10"]  # trec_eval's order, not the request's
    assert "runid" not in expand_measures(["all_trec"]) and "num_q" not in expand_measures(["all_trec"])
    assert {"map", "num_ret", "gm_map"} <= set(expand_measures(["all_trec"]))
    with pytest.raises(UnknownMeasureError):
        parse_measure("not_a_measure_10")
    with pytest.raises(UnknownMeasureError, match=whole("'num_q' is a whole-run value, not a per-query measure")):
        evaluate(_judged(), ["num_q"])
    assert np.asarray(evaluate(_judged(), ["num_ret"])["num_ret"]).tolist() == [2.0, 2.0, 1.0]


def test_collection_size_defaults_to_zero() -> None:
    # utility.1,-1,-2,0.5 = rel_ret - nonrel_ret - 2 rel_not_ret + 0.5 (N - ret - rel_not_ret), trec_eval's -N 0:
    # q0: 1 - 1 - 0 + 0.5 (0 - 2 - 0) = -1; q1: 0 - 2 - 0 + 0.5 (0 - 2 - 0) = -3; q2: 1 - 0 - 2 + 0.5 (0 - 1 - 1) = -2
    values = evaluate(_judged(), ["utility_1,-1,-2,0.5"])["utility_1,-1,-2,0.5"]
    assert values.tolist() == [-1.0, -3.0, -2.0]


def test_dcg_and_ideal_dcg_by_hand() -> None:
    # gain = relevance, discount 1 / log2(rank + 1); the ideal sorts every judged gain descending
    # q0: r at rank 2 -> 1 / log2 3, ideal 1; q1: nothing relevant; q2: r at rank 1 -> 1, ideal 1 + 1 / log2 3
    values = evaluate(_judged(), ["dcg", "ideal_dcg"])
    assert values["dcg"] == pytest.approx([1 / math.log2(3), 0.0, 1.0])
    assert values["ideal_dcg"] == pytest.approx([1.0, 0.0, 1 + 1 / math.log2(3)])
