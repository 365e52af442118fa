"""evaluation/core/_util's small helpers at their edges (issue 19: survivors of the partial mutation run): the
trec_eval order check compares each row with the row before it, the grouping of an empty run, and the duplicate
(query, doc) check with no document vocabulary and over several blocks of queries."""
from __future__ import annotations

import numpy as np

from evaluation.core import _util
from evaluation.core._util import group_rows_by_query, has_duplicate_pairs, trec_order_violations


def brute_force_violations(starts: list[bool], score: list[float], doc: list[int]) -> list[int]:
    """Rows that come before where trec_eval puts them relative to the row above (score descending, then doc id
    descending), within one segment."""
    return [i for i in range(1, len(score)) if not starts[i]
            and (score[i] > score[i - 1] or (score[i] == score[i - 1] and doc[i] > doc[i - 1]))]


def test_a_tie_is_compared_with_the_row_above_not_the_first():
    starts, score, doc = [True, False, False], [1.0, 1.0, 1.0], [5, 1, 2]
    # row 2 (doc 2) ties row 1 (doc 1) and should come before it; it is not above doc 5 of row 0
    assert trec_order_violations(np.array(starts), np.array(score), np.array(doc)).tolist() == [2]
    assert brute_force_violations(starts, score, doc) == [2]


def test_order_violations_agree_with_a_brute_force_on_random_runs():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        starts = (rng.random(n) < 0.3).tolist()
        starts[0] = True
        score = rng.integers(0, 3, n).astype(float).tolist()
        doc = rng.integers(0, 6, n).tolist()
        got = trec_order_violations(np.array(starts), np.array(score), np.array(doc)).tolist()
        assert got == brute_force_violations(starts, score, doc)


def test_an_empty_run_has_no_segment():
    order, offsets, segment_query = group_rows_by_query(np.zeros(0, dtype=np.int64))
    assert order is None
    assert offsets.tolist() == [0]
    assert segment_query.tolist() == []


def test_no_document_vocabulary_means_no_duplicate():
    query, doc = np.array([0, 0, 1]), np.array([0, 0, 0])
    assert has_duplicate_pairs(query, doc, num_docs=0) is False
    assert has_duplicate_pairs(query, doc, num_docs=-1) is False


def test_duplicates_are_found_in_every_block_of_queries():
    num_docs = _util._TABLE_BUDGET  # one query per block: the later blocks start past 0
    query = np.array([0, 0, 1, 1, 2, 2])
    assert has_duplicate_pairs(query, np.array([3, 4, 3, 4, 3, 4]), num_docs) is False
    for duplicated_query in (0, 1, 2):
        doc = np.array([3, 4, 3, 4, 3, 4])
        doc[2 * duplicated_query + 1] = 3
        assert has_duplicate_pairs(query, doc, num_docs) is True, duplicated_query
    # queries out of order are grouped first: (1, 3) twice, apart
    assert has_duplicate_pairs(np.array([1, 0, 1]), np.array([3, 3, 3]), num_docs) is True
    assert has_duplicate_pairs(np.array([1, 0, 1]), np.array([3, 3, 4]), num_docs) is False


def brute_force_grouping(query: list[int]) -> tuple[list[int] | None, list[int], list[int]]:
    runs = [q for i, q in enumerate(query) if i == 0 or query[i - 1] != q]
    if len(runs) == len(set(runs)):  # already contiguous: kept as they are
        order, grouped = None, query
    else:  # stable sort by query
        order = sorted(range(len(query)), key=lambda i: query[i])
        grouped = [query[i] for i in order]
    segments = [q for i, q in enumerate(grouped) if i == 0 or grouped[i - 1] != q]
    offsets = [i for i in range(len(grouped)) if i == 0 or grouped[i - 1] != grouped[i]] + [len(grouped)]
    return order, offsets, segments


def test_rows_are_grouped_by_query_as_a_brute_force_groups_them():
    rng = np.random.default_rng(11)
    cases = [[7], [3, 3, 1, 1, 2], [1, 2, 1], [2, 2, 1, 2], [0, 1, 2, 3], [5, 5, 5]]
    cases += [rng.integers(0, 4, int(rng.integers(1, 10))).tolist() for _ in range(300)]
    for query in cases:
        order, offsets, segment_query = group_rows_by_query(np.array(query, dtype=np.int64))
        expected_order, expected_offsets, expected_segments = brute_force_grouping(query)
        assert (None if order is None else order.tolist()) == expected_order, query
        assert offsets.tolist() == expected_offsets, query
        assert segment_query.tolist() == expected_segments, query


def test_duplicates_with_two_rows_one_document_and_many_queries_per_block():
    assert has_duplicate_pairs(np.array([4, 4]), np.array([2, 2]), num_docs=3) is True
    assert has_duplicate_pairs(np.array([4, 4]), np.array([2, 1]), num_docs=3) is False
    assert has_duplicate_pairs(np.array([0, 0]), np.array([0, 0]), num_docs=1) is True  # a one-document vocabulary
    rng = np.random.default_rng(5)
    for _ in range(100):  # small vocabularies: every query in one block
        n, num_docs = int(rng.integers(2, 15)), int(rng.integers(1, 8))
        query, doc = rng.integers(0, 4, n), rng.integers(0, num_docs, n)
        pairs = list(zip(query.tolist(), doc.tolist()))
        assert has_duplicate_pairs(query, doc, num_docs) is (len(set(pairs)) < len(pairs))
