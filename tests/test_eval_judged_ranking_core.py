"""JudgedRanking's constructors and trec_eval options (evaluation.core.judged_ranking) field by field, on hand cases:
the CSR arrays, R and the judged non-relevant counts, the ideal gains, num_ret, the retrieved depth, trec_eval's
score / doc id order for a dense top-k, -M, -J, and every refusal's whole message."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluation.core.judged_ranking import JudgedRanking
from tests._raises_support import whole


def fields(judged: JudgedRanking) -> dict[str, list]:
    """The arrays as plain lists, and their dtypes."""
    names = ["offsets", "ranks", "relevance", "num_rel", "num_nonrel", "num_ret", "ideal_offsets", "ideal_gains"]
    return {name: getattr(judged, name).tolist() for name in names} | {
        "dtypes": [getattr(judged, name).dtype.name for name in names]}


INT, FLOAT = "int64", "float64"


def test_from_judgments_hand_case() -> None:
    # q0: a judged 1 at rank 2, b judged 0 at rank 1, c judged 2 not retrieved (inf), f judged 1 (nan: not retrieved)
    # q1: d judged -1 (pooled, unjudged) at rank 3.5; q2: e judged 3 at rank 1
    judged = JudgedRanking.from_judgments(3, [0, 0, 0, 1, 2, 0], [2, 1, np.inf, 3.5, 1, np.nan], [1, 0, 2, -1, 3, 1])
    assert fields(judged) == {
        "offsets": [0, 2, 3, 4], "ranks": [1.0, 2.0, 3.5, 1.0], "relevance": [0, 1, -1, 3],
        "num_rel": [3, 0, 1], "num_nonrel": [1, 0, 0], "num_ret": [2, 3, 1],  # num_ret: the largest rank, floored
        "ideal_offsets": [0, 3, 3, 4], "ideal_gains": [2.0, 1.0, 1.0, 3.0],
        "dtypes": [INT, FLOAT, INT, INT, INT, INT, INT, FLOAT]}
    assert judged.num_queries == 3 and judged.relevance_level == 1 and judged.query_ids is None


def test_relevance_level_and_query_ids() -> None:
    judged = JudgedRanking.from_judgments(2, [0, 0, 0, 1], [1, 2, 3, 1], [2, 1, 0, 1], relevance_level=2,
                                          query_ids=["qa", "qb"])
    assert judged.num_rel.tolist() == [1, 0] and judged.num_nonrel.tolist() == [2, 1]
    assert judged.ideal_gains.tolist() == [2.0, 1.0, 1.0]  # the ideal takes every positive level, whatever R is
    assert judged.relevance_level == 2
    assert judged.query_ids.dtype == object and judged.query_ids.tolist() == ["qa", "qb"]


def test_equal_ranks_keep_their_input_order() -> None:
    judged = JudgedRanking.from_judgments(2, [1, 0, 0, 0, 1], [1, 2, 2, 1, 1], [5, 3, 1, 2, 4])
    assert judged.ranks.tolist() == [1.0, 2.0, 2.0, 1.0, 1.0]
    assert judged.relevance.tolist() == [2, 3, 1, 5, 4]
    assert judged.ideal_gains.tolist() == [3.0, 2.0, 1.0, 5.0, 4.0]


def test_num_ret_caps_the_retrieved_ranks() -> None:
    # scalar num_ret 2: rank 2 (and a rounding hair above it) retrieved, 2.5 and 3 not; they still count in R
    judged = JudgedRanking.from_judgments(2, [0, 0, 0, 1, 1], [1, 2 + 1e-12, 2.5, 3, 1.5], [1, 1, 1, 1, 0], 2)
    assert fields(judged) | {"dtypes": None} == {
        "offsets": [0, 2, 3], "ranks": [1.0, 2 + 1e-12, 1.5], "relevance": [1, 1, 0], "num_rel": [3, 1],
        "num_nonrel": [0, 1], "num_ret": [2, 2], "ideal_offsets": [0, 3, 4], "ideal_gains": [1.0, 1.0, 1.0, 1.0],
        "dtypes": None}
    assert judged.num_ret.dtype == np.int64
    # per query: q0 keeps rank 3, q1 keeps nothing; num_ret is reported as given, not as the largest rank
    judged = JudgedRanking.from_judgments(2, [0, 1], [3, 1], [1, 1], np.array([7, 0]))
    assert judged.offsets.tolist() == [0, 1, 1] and judged.num_ret.tolist() == [7, 0]
    # the tolerance is 1e-9: its bound is in, 1.5e-9 above it is out
    judged = JudgedRanking.from_judgments(1, [0, 0], [np.float64(2) + 1e-9, np.float64(2) + 1.5e-9], [1, 1], 2)
    assert judged.ranks.tolist() == [2 + 1e-9]


def test_no_judgment_at_all() -> None:
    judged = JudgedRanking.from_judgments(2, [], [], [])
    assert fields(judged) == {"offsets": [0, 0, 0], "ranks": [], "relevance": [], "num_rel": [0, 0],
                              "num_nonrel": [0, 0], "num_ret": [0, 0], "ideal_offsets": [0, 0, 0],
                              "ideal_gains": [], "dtypes": [INT, FLOAT, INT, INT, INT, INT, INT, FLOAT]}
    # judgments with no finite rank: nothing retrieved, num_ret 0
    judged = JudgedRanking.from_judgments(1, [0], [np.inf], [1])
    assert judged.num_ret.tolist() == [0] and judged.num_rel.tolist() == [1] and judged.offsets.tolist() == [0, 0]


def test_from_judgments_refusals() -> None:
    with pytest.raises(ValueError, match=whole("query, rank and relevance must have the same length")):
        JudgedRanking.from_judgments(1, [0, 0], [1, 2], [1])
    with pytest.raises(ValueError, match=whole("query, rank and relevance must have the same length")):
        JudgedRanking.from_judgments(1, [0], [1, 2], [1, 1])
    with pytest.raises(ValueError, match=whole("query indices must lie in [0, 3)")):
        JudgedRanking.from_judgments(3, [0, 3], [1, 1], [1, 1])
    with pytest.raises(ValueError, match=whole("query indices must lie in [0, 3)")):
        JudgedRanking.from_judgments(3, [-1, 2], [1, 1], [1, 1])
    with pytest.raises(ValueError, match=whole("ranks are 1-based: every finite rank must be >= 1")):
        JudgedRanking.from_judgments(1, [0, 0], [np.inf, 0.999], [1, 1])
    with pytest.raises(ValueError, match=whole("query_ids must have one entry per query")):
        JudgedRanking.from_judgments(2, [0], [1], [1], query_ids=["a"])
    # the bounds themselves are accepted
    judged = JudgedRanking.from_judgments(3, [2, 0], [1.0, np.nan], [1, 1], query_ids=["a", "b", "c"])
    assert judged.offsets.tolist() == [0, 0, 0, 1]


def test_from_judged_ranks() -> None:
    # q0: answers at 1 and 4 (gains 2 and 1), a judged negative at 2; q1: one answer not retrieved (inf)
    judged = JudgedRanking.from_judged_ranks(2, [0, 0, 1], [4, 1, np.inf], [0], [2], relevant_gain=[1, 2, 1],
                                             query_ids=["x", "y"])
    assert fields(judged) | {"dtypes": None} == {
        "offsets": [0, 3, 3], "ranks": [1.0, 2.0, 4.0], "relevance": [2, 0, 1], "num_rel": [2, 1],
        "num_nonrel": [1, 0], "num_ret": [4, 0], "ideal_offsets": [0, 2, 3], "ideal_gains": [2.0, 1.0, 1.0],
        "dtypes": None}
    assert judged.query_ids.tolist() == ["x", "y"] and judged.relevance_level == 1
    # defaults: gain 1, no judged negative; num_ret caps the ranks
    judged = JudgedRanking.from_judged_ranks(2, [1, 0, 0], [3, 2, 6], num_ret=5)
    assert judged.relevance.tolist() == [1, 1] and judged.ranks.tolist() == [2.0, 3.0]
    assert judged.num_ret.tolist() == [5, 5] and judged.num_nonrel.tolist() == [0, 0]
    assert judged.num_rel.tolist() == [2, 1] and judged.ideal_gains.tolist() == [1.0, 1.0, 1.0]
    assert judged.query_ids is None
    with pytest.raises(ValueError, match=whole("relevant_gain must be >= 1")):
        JudgedRanking.from_judged_ranks(1, [0, 0], [1, 2], relevant_gain=[1, 0])


def test_from_topk_column_order() -> None:
    candidates = np.array([[5, 3, -1], [2, 7, 9]])
    judged = JudgedRanking.from_topk(candidates, [0, 0, 0, 1, 1], [3, 5, 9, 9, 2], [1, 0, 2, 1, 0],
                                     query_ids=np.array(["a", "b"]))
    assert fields(judged) | {"dtypes": None} == {
        "offsets": [0, 2, 4], "ranks": [1.0, 2.0, 1.0, 3.0], "relevance": [0, 1, 0, 1], "num_rel": [2, 1],
        "num_nonrel": [1, 1], "num_ret": [2, 3], "ideal_offsets": [0, 2, 3], "ideal_gains": [2.0, 1.0, 1.0],
        "dtypes": None}
    assert judged.query_ids.tolist() == ["a", "b"]
    judged = JudgedRanking.from_topk(candidates, [0, 0, 0, 1, 1], [3, 5, 9, 9, 2], [1, 0, 2, 1, 0],
                                     relevance_level=2)
    assert judged.num_rel.tolist() == [1, 0] and judged.num_nonrel.tolist() == [2, 2]
    assert judged.relevance_level == 2


def test_from_topk_with_scores_follows_trec_eval_order() -> None:
    # row 0: scores ascending; row 1: a tie in ascending doc ids (trec_eval puts the larger id first);
    # row 2: already in trec order; row 3: a padded row, its padding last; row 4: out of order after the top;
    # row 5: a tie in ascending doc ids after the top
    candidates = np.array([[1, 2, 3], [4, 6, 1], [9, 7, 5], [3, 1, -1], [2, 4, 6], [9, 4, 6]])
    scores = np.array([[0.1, 0.2, 0.3], [0.5, 0.5, 0.4], [0.9, 0.9, 0.1], [0.2, 0.7, -np.inf], [0.9, 0.1, 0.5],
                       [0.9, 0.5, 0.5]])
    docs = [1, 2, 3, 4, 6, 1, 9, 7, 5, 3, 1, 2, 4, 6, 9, 4, 6]
    query = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5]
    # the rank of each judged doc, in judgment order, read back from the sorted CSR arrays with distinct gains
    relevance = np.arange(1, 18)
    judged = JudgedRanking.from_topk(candidates, query, docs, relevance, scores)
    rank_of = dict(zip(judged.relevance.tolist(), judged.ranks.tolist()))
    assert [rank_of[r] for r in relevance] == [3, 2, 1, 2, 1, 3, 1, 2, 3, 2, 1, 1, 3, 2, 1, 3, 2]
    assert judged.num_ret.tolist() == [3, 3, 3, 2, 3, 3]
    # a single row out of order
    judged = JudgedRanking.from_topk(np.array([[1, 2]]), [0, 0], [1, 2], [1, 2], np.array([[0.1, 0.2]]))
    assert judged.ranks.tolist() == [1.0, 2.0] and judged.relevance.tolist() == [2, 1]
    with pytest.raises(ValueError, match=whole("scores must have the shape of candidates")):
        JudgedRanking.from_topk(candidates, query, docs, relevance, scores[:, :2])
    with pytest.raises(ValueError, match=whole("candidates must be a 2-D array (queries x depth)")):
        JudgedRanking.from_topk(candidates.reshape(-1), query, docs, relevance)


def test_from_topk_edge_cases() -> None:
    # no judgment; every row padding
    judged = JudgedRanking.from_topk(np.array([[4, 2]]), [], [], [])
    assert judged.offsets.tolist() == [0, 0] and judged.num_ret.tolist() == [2] and judged.num_rel.tolist() == [0]
    judged = JudgedRanking.from_topk(np.full((2, 2), -1), [1], [0], [1])
    assert judged.offsets.tolist() == [0, 0, 0] and judged.num_ret.tolist() == [0, 0]
    assert judged.num_rel.tolist() == [0, 1]
    # the largest id only judged, or only retrieved
    judged = JudgedRanking.from_topk(np.array([[0, 1]]), [0, 0], [1, 0], [1, 1])
    assert judged.ranks.tolist() == [1.0, 2.0]
    judged = JudgedRanking.from_topk(np.array([[0]]), [0], [0], [1])
    assert judged.ranks.tolist() == [1.0] and judged.offsets.tolist() == [0, 1]


def _three_queries() -> JudgedRanking:
    # q0: ranks 1 (rel 1), 3 (-1), 5 (0), 6 (2); q1: ranks 2 (-1), 4 (1); q2: rank 9 (0); num_ret 6, 4, 9
    return JudgedRanking.from_judgments(3, [0, 0, 0, 0, 1, 1, 2], [1, 3, 5, 6, 2, 4, 9], [1, -1, 0, 2, -1, 1, 0],
                                        [6, 4, 9])


def test_truncated() -> None:
    judged = _three_queries()
    cut = judged.truncated(4)
    assert cut.offsets.tolist() == [0, 2, 4, 4] and cut.ranks.tolist() == [1.0, 3.0, 2.0, 4.0]
    assert cut.relevance.tolist() == [1, -1, -1, 1] and cut.num_ret.tolist() == [4, 4, 4]
    # R, the judged non-relevant and the ideal gains stay those of the qrels
    assert cut.num_rel.tolist() == judged.num_rel.tolist() == [2, 1, 0]
    assert cut.num_nonrel.tolist() == [1, 0, 1] and cut.ideal_gains.tolist() == [2.0, 1.0, 1.0]
    assert judged.truncated(3).ranks.tolist() == [1.0, 3.0, 2.0]  # rank 3 itself kept
    none = judged.truncated(0)
    assert none.offsets.tolist() == [0, 0, 0, 0] and none.num_ret.tolist() == [0, 0, 0]
    assert judged.truncated(-2).num_ret.tolist() == [0, 0, 0]
    assert judged.truncated(100).num_ret.tolist() == [6, 4, 9]


def test_judged_only_closes_up_the_judged_documents() -> None:
    judged = _three_queries().judged_only()
    assert judged.offsets.tolist() == [0, 3, 4, 5] and judged.ranks.tolist() == [1.0, 2.0, 3.0, 1.0, 1.0]
    assert judged.relevance.tolist() == [1, 0, 2, 1, 0] and judged.num_ret.tolist() == [3, 1, 1]
    assert judged.num_ret.dtype == np.int64 and judged.ranks.dtype == np.float64
    assert judged.num_rel.tolist() == [2, 1, 0]
    # a last query with nothing judged keeps its (empty) segment
    judged = JudgedRanking.from_judgments(2, [0, 1], [1, 1], [1, -1]).judged_only()
    assert judged.offsets.tolist() == [0, 1, 1] and judged.num_ret.tolist() == [1, 0]


def test_with_num_ret() -> None:
    judged = _three_queries().with_num_ret([1.0, 2.0, 3.0])
    assert judged.num_ret.tolist() == [1, 2, 3] and judged.num_ret.dtype == np.int64
    assert judged.ranks.tolist() == _three_queries().ranks.tolist()


def test_judged_ranking_is_frozen() -> None:
    judged = _three_queries()
    with pytest.raises(dataclasses.FrozenInstanceError):
        judged.num_ret = np.zeros(3)
    default = JudgedRanking(*(np.zeros(1, np.int64),) * 8)
    assert default.relevance_level == 1 and default.query_ids is None and default.num_queries == 0
