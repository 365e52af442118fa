"""kgpool's array entry points (judged ranks, dense top-k) agree with the trec_eval path."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.core import _util
from evaluation.core.macro import JudgedRanking, evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

MEASURES = ["map", "map_cut_20", "ndcg", "ndcg_cut_20", "recip_rank", "P_10", "success_1", "Rprec",
            "bpref", "infAP", "num_ret", "num_rel", "num_rel_ret"]


def dense_campaign(seed: int, num_queries: int = 60, depth: int = 40, entities: int = 200):
    """Top-k candidate matrix with integer scores (many ties) and judgments as integer arrays."""
    rng = np.random.default_rng(seed)
    candidates = np.stack([rng.choice(entities, size=depth, replace=False) for _ in range(num_queries)])
    scores = rng.integers(0, 6, size=(num_queries, depth)).astype(np.float64)
    judged_query, judged_doc, judged_rel = [], [], []
    for q in range(num_queries):
        docs = rng.choice(entities, size=int(rng.integers(1, 25)), replace=False)
        judged_query += [q] * len(docs)
        judged_doc += docs.tolist()
        judged_rel += rng.choice([0, 1, 1, 2], size=len(docs)).tolist()
    return candidates, scores, np.array(judged_query), np.array(judged_doc), np.array(judged_rel)


def as_trec(candidates, scores, judged_query, judged_doc, judged_rel):
    # Zero-padded names: string order == integer order, so trec_eval's docid tie-break matches ours.
    name = lambda e: f"e{e:05d}"  # noqa: E731
    run = {f"q{q:03d}": {name(e): float(s) for e, s in zip(candidates[q], scores[q]) if e >= 0}
           for q in range(len(candidates))}
    qrels: dict[str, dict[str, int]] = {}
    for q, d, r in zip(judged_query, judged_doc, judged_rel):
        qrels.setdefault(f"q{q:03d}", {})[name(d)] = int(r)
    return judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))


def assert_same(a: dict, b: dict) -> None:
    for measure in MEASURES:
        np.testing.assert_allclose(a[measure], b[measure], atol=1e-12, err_msg=measure)


@pytest.mark.parametrize(("seed", "table_budget"), [(0, 1 << 21), (1, 500)])
def test_topk_with_scores_matches_trec_path(seed: int, table_budget: int, monkeypatch) -> None:
    # A small lookup-table budget forces many query blocks (and 1-query blocks).
    monkeypatch.setattr(_util, "_TABLE_BUDGET", table_budget)
    candidates, scores, jq, jd, jr = dense_campaign(seed)
    candidates[3, -5:] = -1  # a short list, padded
    scores[3, -5:] = -np.inf
    reference = evaluate(as_trec(candidates, scores, jq, jd, jr), MEASURES)
    ours = evaluate(JudgedRanking.from_topk(candidates, jq, jd, jr, scores=scores), MEASURES)
    assert_same(ours, reference)


def test_sorted_topk_and_judged_ranks_match_trec_path() -> None:
    candidates, scores, jq, jd, jr = dense_campaign(5)
    # Put each row in trec_eval order (score desc, id desc) so that column order is the ranking.
    order = np.lexsort((-candidates, -scores), axis=1)
    candidates = np.take_along_axis(candidates, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    reference = evaluate(as_trec(candidates, scores, jq, jd, jr), MEASURES)

    from_columns = JudgedRanking.from_topk(candidates, jq, jd, jr)
    assert_same(evaluate(from_columns, MEASURES), reference)

    # Engine path: the rank of each judged entity, looked up independently with a dict per row.
    position = [{int(e): i + 1 for i, e in enumerate(row)} for row in candidates]
    rank = np.array([position[q].get(int(d), math.inf) for q, d in zip(jq, jd)], dtype=float)
    relevant = jr >= 1
    from_ranks = JudgedRanking.from_judged_ranks(
        len(candidates), jq[relevant], rank[relevant], jq[~relevant], rank[~relevant],
        relevant_gain=jr[relevant], num_ret=candidates.shape[1])
    assert_same(evaluate(from_ranks, MEASURES), reference)


def test_fractional_ranks_are_used_as_given() -> None:
    # Question 0: answers at realistic ranks 1.5 and 4 (tied with another candidate at the top).
    # Question 1: its only answer is ranked 15, beyond the retrieved depth 10: not retrieved.
    judged = JudgedRanking.from_judged_ranks(
        2, relevant_query=np.array([0, 0, 1]), relevant_rank=np.array([1.5, 4.0, 15.0]), num_ret=10)
    values = evaluate(judged, ["map", "recip_rank", "P_1", "success_1", "ndcg", "num_rel", "num_rel_ret"])
    assert values["map"][0] == pytest.approx((1 / 1.5 + 2 / 4) / 2)
    assert values["recip_rank"][0] == pytest.approx(1 / 1.5)
    assert values["P_1"][0] == 0.0 and values["success_1"][0] == 0.0
    ideal = 1 + 1 / math.log2(3)
    assert values["ndcg"][0] == pytest.approx((1 / math.log2(2.5) + 1 / math.log2(5)) / ideal)
    assert values["recip_rank"][1] == 0.0 and values["map"][1] == 0.0
    assert values["num_rel"].tolist() == [2, 1] and values["num_rel_ret"].tolist() == [2, 0]


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="1-based"):
        JudgedRanking.from_judged_ranks(1, np.array([0]), np.array([0.5]))
    with pytest.raises(ValueError, match="query indices"):
        JudgedRanking.from_judged_ranks(1, np.array([3]), np.array([1.0]))
