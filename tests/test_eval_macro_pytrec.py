"""Macro measures agree with pytrec_eval (trec_eval 9.x C code) on random qrels and runs."""
from __future__ import annotations

import numpy as np
import pytest

import pytrec_eval  # noqa: E402

from evaluation.core.macro import evaluate, mean_over_queries
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

MEASURES = [
    "map", "map_cut_5", "map_cut_20", "ndcg", "ndcg_cut_5", "ndcg_cut_20", "P_1", "P_5", "P_10",
    "recip_rank", "success_1", "success_5", "Rprec", "bpref", "infAP", "num_ret", "num_rel",
    "num_rel_ret",
]
PYTREC_NAMES = {"map", "map_cut.5,20", "ndcg", "ndcg_cut.5,20", "P.1,5,10", "recip_rank", "success.1,5", "Rprec", "bpref",
                "infAP", "num_ret", "num_rel", "num_rel_ret"}


def random_campaign(seed: int, tied_scores: bool) -> tuple[dict, dict]:
    """Qrels/run dicts with every awkward case trec_eval handles.

    Queries without qrels, qrels-only queries, queries judged all non-relevant, graded and negative
    ("pooled but unjudged") labels, relevant docs never retrieved, unjudged retrieved docs; with
    `tied_scores` scores take 4 values so the docid tie-break matters.
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(120):
        qid = f"q{q}"
        if q % 9:
            judged = rng.choice(400, size=int(rng.integers(1, 50)), replace=False)
            labels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=len(judged))
            if q % 13 == 0:
                labels[:] = 0
            qrels[qid] = {f"d{d}": int(label) for d, label in zip(judged, labels)}
        if q % 11:
            retrieved = rng.choice(400, size=int(rng.integers(1, 120)), replace=False)
            scores = rng.integers(0, 4, size=len(retrieved)) if tied_scores else rng.random(len(retrieved))
            run[qid] = {f"d{d}": float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


@pytest.mark.parametrize("tied_scores", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_per_query_values_match_pytrec_eval(seed: int, tied_scores: bool) -> None:
    qrels, run = random_campaign(seed, tied_scores)
    reference = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_NAMES).evaluate(run)

    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    ours = evaluate(judged, MEASURES)

    assert sorted(reference) == list(judged.query_ids)
    for measure in MEASURES:
        expected = np.array([reference[qid][measure] for qid in judged.query_ids])
        np.testing.assert_allclose(ours[measure], expected, rtol=0, atol=1e-12, err_msg=measure)


def test_mean_is_over_queries_in_both_files_including_all_nonrelevant() -> None:
    qrels, run = random_campaign(7, tied_scores=False)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P"}).evaluate(run)
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    assert (judged.num_rel == 0).any(), "the data must contain a query judged all non-relevant"

    summary = mean_over_queries(evaluate(judged, ["map", "P_10"]), judged)
    assert summary["map"] == pytest.approx(np.mean([v["map"] for v in reference.values()]), abs=1e-12)
    assert summary["P_10"] == pytest.approx(np.mean([v["P_10"] for v in reference.values()]), abs=1e-12)

    with_relevant = mean_over_queries(evaluate(judged, ["map"]), judged, only_with_relevant=True)
    kept = [reference[q]["map"] for q, r in zip(judged.query_ids, judged.num_rel) if r > 0]
    assert with_relevant["map"] == pytest.approx(np.mean(kept), abs=1e-12)
