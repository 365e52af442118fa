"""Every trec_eval measure pytrec_eval exposes, with parameters, agrees per query with pytrec_eval.

pytrec-eval-terrier embeds trec_eval's C code. Random qrels / runs with score ties, graded and negative
("pooled but unjudged") labels and queries missing on either side; relevance levels 1 and 2; with and
without -J (judged documents only). The number of values compared is printed (pytest -s).
"""
from __future__ import annotations

import numpy as np
import pytest

import pytrec_eval  # noqa: E402
# The C extension itself: pytrec_eval's Python wrapper refuses parameters such as ndcg.1=3,2=9.
from pytrec_eval_ext import RelevanceEvaluator as TrecEvalEvaluator  # noqa: E402

from evaluation.core import measure_names
from evaluation.core.macro import evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec
from tests._trec_eval_support import random_campaign

# trec_eval -m arguments; each is one pytrec_eval evaluator (it takes one parameter list per measure)
SPECS = [
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall",
    "iprec_at_recall..15,.5,1", "P", "P.1,3,7", "recall", "recall.3,1000", "infAP", "gm_bpref", "Rprec_mult",
    "Rprec_mult.0.25,1.5,3", "utility", "utility.2,-1,0.5,0.25", "11pt_avg", "11pt_avg.0.2,0.5,0.8", "binG",
    "G", "G.1=2,2=5", "G.1=1.5,2=1,3=2.2", "ndcg", "ndcg.1=3,2=9,3=4.5", "ndcg.0=1,2=0.5", "ndcg.3=0.5,1=1.4",
    # gains less than 1 apart: trec_eval's (int) (g1 - g2) comparator orders the level table its own way
    "ndcg.1=2.5,2=2,3=1.6", "ndcg_rel", "ndcg_rel.1=0.5,3=2", "ndcg_rel.1=1.5,2=1,3=2.2", "Rndcg",
    "Rndcg.1=3,2=9", "Rndcg.2=1", "Rndcg.1=1.5,2=1,3=2.2", "ndcg_cut", "ndcg_cut.3,7", "map_cut",
    "map_cut.2,9", "relative_P", "relative_P.3,50", "success", "success.2,3", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "set_F.0.5", "num_nonrel_judged_ret",
]
COMPARED = {"values": 0, "queries": 0}


def pytrec_key(measure: measure_names.Measure) -> str:
    # pytrec_eval names single-valued parameterised measures by their base name
    return measure.name if measure.kind in ("cut", "cut_real", "plain", "long", "gm") else measure.base


@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_measure_matches_pytrec_eval(seed: int, level: int, judged_only: bool) -> None:
    qrels, run = random_campaign(seed, ties=seed != 2)
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run), relevance_level=level)
    if judged_only:
        judged = judged.judged_only()
    for spec in SPECS:
        measures = measure_names.request([spec])
        ours = evaluate(judged, measures)
        reference = TrecEvalEvaluator(query_relevance=qrels, measures={spec}, relevance_level=level,
                                      judged_docs_only_flag=int(judged_only)).evaluate(run)
        assert sorted(reference) == list(judged.query_ids)
        for measure in measures:
            expected = np.array([reference[qid][pytrec_key(measure)] for qid in judged.query_ids])
            np.testing.assert_allclose(ours[measure.name], expected, rtol=0, atol=1e-9, equal_nan=True,
                                       err_msg=f"{spec} -> {measure.name} (level {level}, -J {judged_only})")
            COMPARED["values"] += len(expected)
    COMPARED["queries"] += judged.num_queries
    print(f"\ncompared with pytrec_eval so far: {COMPARED['values']} per-query values "
          f"({len(SPECS)} measure specs, {COMPARED['queries']} query evaluations)")


def test_official_and_all_trec_names_cover_pytrec_eval() -> None:
    # every measure pytrec_eval knows is one we compute (runid / num_q are whole-run values)
    ours = {m.base for m in measure_names.request(["all_trec"])}
    assert set(pytrec_eval.supported_measures) <= ours
