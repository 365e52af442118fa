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
