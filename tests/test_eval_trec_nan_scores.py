"""NaN scores are ranked where trec_eval (built with glibc) ranks them.

trec_eval reads a run sorted by docno, then sorts each query with qsort and comp_sim_docno (form_res_rels.c):
score descending, then docno descending. A NaN compares neither higher nor lower than any score, so the
order depends on qsort's algorithm. The reference here is the C library's own qsort, called through ctypes
on trec_eval's 32-byte DOCNO_INFO records with that comparator.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
import platform

import numpy as np
import pytest

from evaluation.core.macro import evaluate
from evaluation.core.trec import Qrels, Run, judged_ranking_from_trec

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="trec_eval's NaN order is glibc's qsort")


class DocnoInfo(ctypes.Structure):  # form_res_rels.c
    _fields_ = [("docno", ctypes.c_char_p), ("sim", ctypes.c_double), ("rank", ctypes.c_long), ("rel", ctypes.c_long)]


COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DocnoInfo), ctypes.POINTER(DocnoInfo))


def libc_order(scores: dict[str, float]) -> list[str]:
    libc = ctypes.CDLL(ctypes.util.find_library("c"))

    @COMPARE
    def comp_sim_docno(a, b):
        a, b = a.contents, b.contents
        if a.sim > b.sim:
            return -1
        if a.sim < b.sim:
            return 1
        return (b.docno > a.docno) - (b.docno < a.docno)  # strcmp(ptr2->docno, ptr1->docno)

    docs = sorted(scores)  # get_trec_results.c hands the query's docs over sorted by docno
    array = (DocnoInfo * len(docs))(*[DocnoInfo(d.encode(), scores[d], 0, 0) for d in docs])
    libc.qsort(array, len(docs), ctypes.sizeof(DocnoInfo), comp_sim_docno)
    return [record.docno.decode() for record in array]


def our_order(scores: dict[str, float]) -> list[str]:
    # one relevant doc per query: its recip_rank gives its rank
    docs = sorted(scores)
    qrels = {f"q{i}": {doc: 1} for i, doc in enumerate(docs)}
    run = {f"q{i}": scores for i in range(len(docs))}
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    rank = 1.0 / evaluate(judged, ["recip_rank"])["recip_rank"]
    return [docs[int(qid[1:])] for qid in np.asarray(judged.query_ids)[np.argsort(rank)]]


def test_docno_info_is_the_32_byte_record_glibc_sorts_in_place() -> None:
    assert ctypes.sizeof(DocnoInfo) == 32  # above 32 bytes glibc sorts pointers instead: another order


@pytest.mark.parametrize("seed", range(6))
def test_nan_scores_rank_as_in_trec_eval(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        docs = [f"d{d}" for d in rng.choice(300, size=int(rng.integers(2, 40)), replace=False)]
        values = rng.choice([math.nan, 0.0, 0.5, 1.0, 2.0, -math.inf, math.inf], size=len(docs),
                            p=[0.3, 0.2, 0.1, 0.2, 0.1, 0.05, 0.05])
        scores = dict(zip(docs, values.tolist()))
        assert our_order(scores) == libc_order(scores)


def test_nan_goes_where_its_docno_sends_it() -> None:
    # Merge sort of [b 2, c 1, z nan] (docno order): halves [b] and [c, z]; z vs c compares docnos, z > c
    # so z comes first: [z, c]; merging, z vs b again by docno: z first, then b before c by score.
    assert our_order({"z": math.nan, "b": 2.0, "c": 1.0}) == ["z", "b", "c"] == libc_order(
        {"z": math.nan, "b": 2.0, "c": 1.0})
    # With docno a the same steps put the NaN last.
    assert our_order({"a": math.nan, "b": 2.0, "c": 1.0}) == ["b", "c", "a"]


def orders_per_query(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    # every doc judged, each with its own relevance label (1 + its place in docno order): the labels of a query's
    # entries, which come in rank order, name its docs in the order they were ranked
    names = {qid: sorted(scores) for qid, scores in run.items()}
    qrels = {qid: {doc: index + 1 for index, doc in enumerate(docs)} for qid, docs in names.items()}
    judged = judged_ranking_from_trec(Qrels.from_dict(qrels), Run.from_dict(run))
    orders = {}
    for index, qid in enumerate(np.asarray(judged.query_ids).tolist()):
        rows = slice(judged.offsets[index], judged.offsets[index + 1])
        assert judged.ranks[rows].tolist() == list(range(1, len(names[qid]) + 1))
        orders[qid] = [names[qid][label - 1] for label in judged.relevance[rows].tolist()]
    return orders


def test_nan_in_one_query_of_several_reorders_that_query() -> None:
    # q1 holds the NaN (trec_eval ranks b, c, a); q0 and q2 are in plain score order already.
    run = {"q0": {"x": 2.0, "y": 1.0}, "q1": {"a": math.nan, "b": 2.0, "c": 1.0}, "q2": {"u": 3.0, "v": 0.0}}
    assert orders_per_query(run) == {"q0": ["x", "y"], "q1": ["b", "c", "a"], "q2": ["u", "v"]}
    assert libc_order(run["q1"]) == ["b", "c", "a"]


@pytest.mark.parametrize("seed", range(3))
def test_queries_with_and_without_nan_rank_as_in_trec_eval(seed: int) -> None:
    # rows listed in a random order (some queries out of score order, so both re-sorting paths run at once)
    rng = np.random.default_rng(100 + seed)
    for _ in range(10):
        run = {}
        for query in range(int(rng.integers(2, 7))):
            docs = [f"d{d}" for d in rng.choice(60, size=int(rng.integers(1, 12)), replace=False)]
            p_nan = 0.4 if rng.random() < 0.5 else 0.0
            values = rng.choice([math.nan, 0.0, 0.5, 1.0, 2.0], size=len(docs),
                                p=[p_nan, 0.3 - p_nan / 4, 0.2 - p_nan / 4, 0.3 - p_nan / 4, 0.2 - p_nan / 4])
            run[f"q{query}"] = dict(zip(docs, values.tolist()))
        assert orders_per_query(run) == {qid: libc_order(scores) for qid, scores in run.items()}
