"""trec_eval's -c, -M and -N, and the measures pytrec_eval does not expose (rbp, rbp_resid, unj, yaap,
ndcg_p, relstring, kgpool's MR), against independent references.

-c: trec_eval 10 (trec_eval.c) evaluates a qrels query missing from the run on a one-document ranking
('ceci_nest_pas_un_docno', score 1) and then resets num_ret, utility, unj*, rbp_resid and relstring; the
reference feeds pytrec_eval that same ranking. -M: pytrec_eval on runs cut to their first M documents in
trec_eval order. The rest: brute-force transliterations of trec_eval's loops (tests/_trec_eval_support.py).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pytrec_eval_ext import RelevanceEvaluator as TrecEvalEvaluator  # noqa: E402

from evaluation.core import measure_names
from evaluation.core.trec import Qrels, Run
from evaluation.core.trec_eval import TrecEvalOptions, trec_eval
from tests import _trec_eval_support as brute

PYTREC_SPECS = ["num_ret", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
                "recall", "infAP", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
                "ndcg_cut", "relative_P", "success", "set_P", "set_F", "set_map", "num_nonrel_judged_ret"]


def ours(qrels: dict, run: dict, specs: list[str], **options):
    measures = measure_names.request(specs)
    return trec_eval(Qrels.from_dict(qrels), Run.from_dict(run, tag="t"), measures, TrecEvalOptions(**options))


def reference(qrels: dict, run: dict, spec: str) -> dict:
    return TrecEvalEvaluator(query_relevance=qrels, measures={spec}, relevance_level=1,
                             judged_docs_only_flag=0).evaluate(run)


def compare(result, qrels: dict, run: dict, specs: list[str], reset: set[str] = frozenset()) -> int:
    compared = 0
    for spec in specs:
        theirs = reference(qrels, run, spec)
        for measure in measure_names.request([spec]):
            key = measure.name if measure.kind in ("cut", "cut_real", "plain", "long", "gm") else measure.base
            expected = np.array([0.0 if (qid in reset and measure.name in ("num_ret", "utility"))
                                 else theirs[qid][key] for qid in result.query_ids])
            np.testing.assert_allclose(result.per_query[measure.name], expected, atol=1e-9, equal_nan=True,
                                       err_msg=measure.name)
            compared += len(expected)
    return compared


@pytest.mark.parametrize("seed", [3, 4])
def test_complete_evaluates_missing_queries_like_trec_eval(seed: int) -> None:
    qrels, run = brute.random_campaign(seed)
    missing = sorted(set(qrels) - set(run))
    assert missing, "the data must have qrels queries without results"
    result = ours(qrels, run, ["num_q"] + PYTREC_SPECS + ["unj", "rbp_resid", "relstring"], complete=True)
    assert list(result.query_ids) == sorted(qrels)  # every qrels query, in qid order
    bogus = {**run, **{qid: {"ceci_nest_pas_un_docno": 1.0} for qid in missing}}
    count = compare(result, qrels, bogus, PYTREC_SPECS, reset=set(missing))
    index = np.isin(result.query_ids, missing)
    for name in ("unj_5", "unj_10", "unj_20", "rbp_resid"):
        assert (result.per_query[name][index] == 0).all()
    assert set(result.per_query["relstring"][index]) == {""}
    # the summary divides by all qrels queries
    assert result.summary["num_q"] == len(qrels)
    assert result.summary["map"] == pytest.approx(np.mean(result.per_query["map"]))
    print(f"\n-c: {count} values compared with pytrec_eval")


@pytest.mark.parametrize("max_retrieved", [1, 7, 40])
def test_max_retrieved_keeps_the_first_documents_in_trec_order(max_retrieved: int) -> None:
    qrels, run = brute.random_campaign(5)
    result = ours(qrels, run, PYTREC_SPECS, max_retrieved=max_retrieved)
    cut = {qid: {doc: scores[doc] for doc in brute.trec_order(scores)[:max_retrieved]} for qid, scores in run.items()}
    count = compare(result, qrels, cut, PYTREC_SPECS)
    assert result.per_query["num_ret"].max() == max_retrieved
    print(f"\n-M {max_retrieved}: {count} values compared with pytrec_eval")


@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("seed", [6, 7])
def test_measures_without_pytrec_eval_match_brute_force(seed: int, judged_only: bool) -> None:
    qrels, run = brute.random_campaign(seed, labels=(-1, 0, 0, 1, 2, 3, 12))
    specs = ["rbp", "rbp.p=0.5", "rbp_resid", "rbp_resid.p=0.8", "unj", "unj.1,3,50", "yaap", "ndcg_p", "relstring",
             "relstring.25", "MR"]
    # one request per spec: trec_eval keeps only the first parameter list given for a measure
    results = [ours(qrels, run, [spec], judged_only=judged_only) for spec in specs]
    per_query = {name: values for result in results for name, values in result.per_query.items()}
    result = results[0]
    expected: dict[str, list] = {}
    for qid in result.query_ids:
        ranked = brute.ranked_relevance(qrels[qid], run[qid], judged_only=judged_only)
        judged = qrels[qid]
        rows = {"rbp": brute.brute_rbp(ranked, judged), "rbp_p=0.5": brute.brute_rbp(ranked, judged, 0.5),
                "rbp_resid": brute.brute_rbp_resid(ranked), "rbp_resid_p=0.8": brute.brute_rbp_resid(ranked, 0.8),
                "yaap": brute.brute_yaap(ranked, judged), "ndcg_p": brute.brute_ndcg_p(ranked, judged),
                "relstring": brute.brute_relstring(ranked), "relstring_25": brute.brute_relstring(ranked, 25),
                "MR": brute.brute_mean_rank(ranked, judged)}
        rows.update({f"unj_{k}": brute.brute_unj(ranked, k) for k in (1, 3, 5, 10, 20, 50)})
        for name, value in rows.items():
            expected.setdefault(name, []).append(value)
    for name, values in expected.items():
        if name.startswith("relstring"):
            assert list(per_query[name]) == values, name
        else:
            np.testing.assert_allclose(per_query[name], values, atol=1e-12, equal_nan=True, err_msg=name)
    print(f"\nbrute force: {sum(len(v) for v in expected.values())} values compared ({len(expected)} measures)")
    assert any(">" in text for text in expected["relstring_25"])  # a level above 9 was retrieved
    if not judged_only:
        assert any("." in text for text in expected["relstring_25"])  # and a doc judged < 0


def test_hand_computed_rbp_yaap_unj_mr() -> None:
    # ranking: r (rel 1), u (not judged), n (rel 0), r2 (rel 1); one relevant doc (r3) not retrieved
    qrels = {"q": {"r": 1, "n": 0, "r2": 1, "r3": 1}}
    run = {"q": {"r": 4.0, "u": 3.0, "n": 2.0, "r2": 1.0}}
    result = ours(qrels, run, ["rbp", "rbp_resid", "yaap", "unj.2,4", "MR", "relstring"])
    values = {name: v[0] for name, v in result.per_query.items()}
    assert values["rbp"] == pytest.approx(0.1 * (1 + 0.9 ** 3))  # gains 1, 0, 0, 1 at p^0..p^3
    assert values["rbp_resid"] == pytest.approx(0.9 ** 4 + 0.1 * 0.9)  # one unjudged at rank 2
    precision_sum = 1 / 1 + 2 / 4
    assert values["yaap"] == pytest.approx(math.log((1 + precision_sum) / (1 + 3 - precision_sum)))
    assert values["unj_2"] == 0.5 and values["unj_4"] == 0.25
    assert values["MR"] == 1.0
    assert values["relstring"] == "1-01"


def test_relstring_digits_up_to_nine() -> None:
    # levels 8, 9, 10, 11 and 0 in rank order: a digit up to 9, ">" above it
    qrels = {"q": {"a": 8, "b": 9, "c": 10, "d": 11, "e": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    assert ours(qrels, run, ["relstring"]).per_query["relstring"][0] == "89>>0"


def test_mean_rank_when_nothing_relevant_is_retrieved() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 0}}
    run = {"a": {"u1": 2.0, "u2": 1.0}, "b": {"y": 1.0}}
    result = ours(qrels, run, ["MR"])
    assert result.per_query["MR"][0] == 3.0  # num_ret + 1
    assert math.isnan(result.per_query["MR"][1])  # no relevant doc
    assert result.summary["MR"] == 3.0  # b is left out of the mean


def test_collection_size_enters_utility() -> None:
    # utility.a,b,c,d = a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*(N - ret - rel_not_ret)
    qrels = {"q": {"r1": 1, "r2": 1, "n": 0}}
    run = {"q": {"r1": 3.0, "n": 2.0, "u": 1.0}}
    result = ours(qrels, run, ["utility.1,-1,-2,0.5"], num_docs_in_collection=100)
    # rel_ret 1, retrieved 3 -> nonrel_ret 2, rel_not_ret 1, nonrel_not_ret = 100 + 1 - 3 - 2 = 96
    assert result.per_query["utility_1,-1,-2,0.5"][0] == pytest.approx(1 - 2 - 2 + 0.5 * 96)
