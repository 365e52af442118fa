"""Macro measures agree with ranx (an independent numba implementation) on tie-free data.

ranx differs from trec_eval on score ties and on queries without relevant documents, so the data here
has distinct scores and at least one relevant document per query.
"""
from __future__ import annotations

import os
import warnings

# ranx's metrics are numba functions, compiled on first use: 25-30 s per run in a fresh checkout (the compile
# cache lives in the environment, which CI builds anew). Interpreted they give the same numbers on data this
# small in a second. Before ranx imports numba, which reads the variable once.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import ranx  # noqa: E402

from evaluation.core.macro import evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

# ours -> ranx
MEASURES = {
    "map": "map", "map_cut_10": "map@10", "ndcg": "ndcg", "ndcg_cut_10": "ndcg@10",
    "ndcg_cut_3": "ndcg@3", "P_5": "precision@5", "recip_rank": "mrr", "success_3": "hit_rate@3",
    "Rprec": "r-precision",
}


def tie_free_campaign(seed: int, graded: bool) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(80):
        qid = f"q{q}"
        judged = rng.choice(300, size=int(rng.integers(2, 30)), replace=False)
        labels = rng.choice([0, 0, 1, 2, 3] if graded else [0, 0, 1], size=len(judged))
        labels[0] = max(labels[0], 1)  # at least one relevant document
        qrels[qid] = {f"d{d}": int(label) for d, label in zip(judged, labels)}
        retrieved = rng.choice(300, size=int(rng.integers(1, 60)), replace=False)
        scores = rng.permutation(len(retrieved)) + rng.random()  # distinct
        run[qid] = {f"d{d}": float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


@pytest.mark.parametrize(("seed", "graded"), [(10, False), (11, True)])
def test_per_query_values_match_ranx(seed: int, graded: bool) -> None:
    qrels, run = tie_free_campaign(seed, graded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(MEASURES.values()),
                                  return_mean=False, make_comparable=True)
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    ours = evaluate(judged, list(MEASURES))
    # ranx orders queries as its Run does: by insertion; map ours (sorted ids) onto that order.
    ranx_order = list(ranx.Run(run).keys())
    position = {qid: i for i, qid in enumerate(judged.query_ids)}
    index = np.array([position[qid] for qid in ranx_order])
    for name, ranx_name in MEASURES.items():
        np.testing.assert_allclose(ours[name][index], reference[ranx_name], atol=1e-12, err_msg=name)
