"""MeasureContext, the per-entry and per-query quantities the macro measures share, on a hand-computed case.

Query 0 retrieves 5 docs; judged among them: rank 1 (relevance 2), rank 2 (0), rank 4 (-1: judged, neither
relevant nor non-relevant) and rank 5 (1). Query 1 retrieves 3 docs; judged: rank 2 (0), and one relevant doc
it did not retrieve. Relevant = relevance >= 1.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.core.judged_ranking import JudgedRanking
from evaluation.core.macro_context import MeasureContext
from evaluation.core.macro_rank import utility


@pytest.fixture
def judged() -> JudgedRanking:
    return JudgedRanking.from_judgments(2, [0, 0, 0, 0, 1, 1], [1, 2, 4, 5, np.inf, 2], [2, 0, -1, 1, 1, 0], [5, 3])


def test_per_entry_running_counts(judged: JudgedRanking) -> None:
    ctx = MeasureContext(judged)
    assert ctx.get("rel_so_far").tolist() == [1, 1, 1, 2, 0]
    assert ctx.get("precision_at_rel").tolist() == [1.0, 0.0, 0.0, 2 / 5, 0.0]
    assert ctx.get("is_nonrel").tolist() == [False, True, False, False, True]
    assert ctx.get("nonrel_so_far").tolist() == [0, 1, 1, 1, 1]
    assert ctx.get("unjudged_so_far").tolist() == [0, 0, 1, 1, 0]


def test_per_query_counts(judged: JudgedRanking) -> None:
    ctx = MeasureContext(judged)
    assert ctx.get("first_rel_rank").tolist() == [1.0, math.inf]
    assert ctx.get("num_rel_ret").tolist() == [2.0, 0.0]
    assert ctx.get("num_judged_ret").tolist() == [3.0, 1.0]
    assert ctx.get("sum_precision_at_rel").tolist() == [1.4, 0.0]
    assert ctx.divide_by_num_rel(np.array([1.4, 0.5])).tolist() == [0.7, 0.5]
    assert ctx.hits_at(4).tolist() == [1.0, 0.0]
    assert ctx.hits_at(np.array([5.0, 1.0])).tolist() == [2.0, 0.0]
    assert ctx.hits_at(np.array([1.0, 5.0])).tolist() == [1.0, 0.0]


def test_ndcg_with_and_without_cut_off(judged: JudgedRanking) -> None:
    ctx = MeasureContext(judged)
    dcg = 2 / math.log2(2) + 1 / math.log2(6)  # relevance 2 at rank 1, 1 at rank 5 (-1 gains nothing)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ctx.ndcg(None) == pytest.approx([dcg / ideal, 0.0], abs=1e-15)
    assert ctx.ndcg(2) == pytest.approx([2 / ideal, 0.0], abs=1e-15)
    assert ctx.ndcg(1) == pytest.approx([1.0, 0.0], abs=1e-15)


def test_collection_size_defaults_to_zero_as_without_trec_eval_s_minus_n(judged: JudgedRanking) -> None:
    # utility 0, 0, 0, 1: the non-relevant docs not retrieved, N + rel_ret - ret - rel
    assert utility(MeasureContext(judged), (0.0, 0.0, 0.0, 1.0)).tolist() == [0 + 2 - 5 - 2, 0 + 0 - 3 - 1]
    assert utility(MeasureContext(judged, 10), (0.0, 0.0, 0.0, 1.0)).tolist() == [5.0, 6.0]
