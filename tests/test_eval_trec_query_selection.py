"""Which queries trec_eval evaluates, and which of their documents it matches, when the qrels and the run name
different queries and documents: the codes of each side are re-read against the union of both vocabularies.

Reference: pytrec_eval (trec_eval's C code), which evaluates the queries in both the qrels and the run.
"""
from __future__ import annotations

import numpy as np
import pytest

from pytrec_eval_ext import RelevanceEvaluator as TrecEvalEvaluator  # noqa: E402

from evaluation.core.macro import evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P_5"]


def ours(qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    values = evaluate(judged, MEASURES)
    return {qid: {name: float(values[name][index]) for name in MEASURES}
            for index, qid in enumerate(np.asarray(judged.query_ids).tolist())}


def theirs(qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    evaluated = TrecEvalEvaluator(query_relevance=qrels, measures={"num_ret", "num_rel", "num_rel_ret", "map",
                                                                   "recip_rank", "P.5"}).evaluate(run)
    return {qid: {name: float(values[name]) for name in MEASURES} for qid, values in sorted(evaluated.items())}


RUN = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 1.0, "b": 3.0, "c": 2.0, "d": 0.5},
       "q3": {"c": 2.0, "d": 1.0}}


@pytest.mark.parametrize("qrels", [
    {"q2": {"c": 1, "a": 0}},                          # one query of the run's three, with the run's docs
    {"q2": {"c": 1}},                                  # one query and one document of the run's
    {"q3": {"d": 1}, "q9": {"a": 1}},                  # a query the run lacks (not evaluated)
    {"q1": {"b": 1}, "q2": {"z": 1}, "q4": {"c": 1}},  # a judged doc nobody retrieved; a query the run lacks
    {"q0": {"c": 1}, "q1": {"c": 1, "a": 0}, "q2": {"b": 1}, "q3": {"c": 1}},  # every run query and one more
])
def test_evaluated_queries_and_matched_documents_as_in_trec_eval(qrels: dict) -> None:
    assert ours(qrels, RUN) == theirs(qrels, RUN)


@pytest.mark.parametrize("run", [
    {"q2": {"b": 1.0}},                                # one query and one document
    {"q2": {"b": 1.0, "a": 2.0}, "q7": {"b": 1.0}},    # a query the qrels lack (not evaluated)
])
def test_a_run_naming_a_few_of_the_qrels_queries_and_documents(run: dict) -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 0, "b": 1, "c": 1}, "q3": {"c": 1}}
    assert ours(qrels, run) == theirs(qrels, run)
    assert list(ours(qrels, run)) == ["q2"]
