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


# --- CSR helpers, segment sums, judgment matching, codes and trec_eval's merge sort (the rest of the module) ---

def test_offsets_and_segment_ids_by_hand():
    offsets = _util.offsets_from_counts(np.array([2, 0, 3]))
    assert offsets.dtype == np.int64 and offsets.tolist() == [0, 2, 2, 5]
    assert _util.offsets_from_counts(np.zeros(0, dtype=np.int64)).tolist() == [0]
    seg = _util.segment_ids(offsets)
    assert seg.dtype == np.int64 and seg.tolist() == [0, 0, 2, 2, 2]
    assert _util.segment_ids(np.array([0])).tolist() == []
    assert _util.segment_ids(np.array([0, 0, 1])).tolist() == [1]


def brute_force_running(values: list, counts: list[int]) -> list:
    out, position = [], 0
    for count in counts:
        total = 0.0 if values and isinstance(values[0], float) else 0
        for value in values[position:position + count]:
            total += value  # added in order, as a C loop adds
            out.append(total)
        position += count
    return out


def test_segment_cumsum_restarts_at_every_segment():
    counts = [3, 0, 1, 2]
    offsets = _util.offsets_from_counts(np.array(counts))
    seg = _util.segment_ids(offsets)
    ints = _util.segment_cumsum(np.array([1, 2, 3, 4, 5, 6]), offsets, seg)
    assert ints.dtype == np.int64 and ints.tolist() == [1, 3, 6, 4, 5, 11]
    floats = _util.segment_cumsum(np.array([0.5, 0.25, 1.5, 2.5, 0.75, 0.125]), offsets, seg)
    assert floats.dtype == np.float64 and floats.tolist() == [0.5, 0.75, 2.25, 2.5, 0.75, 0.875]
    rng = np.random.default_rng(8)
    for _ in range(100):
        counts = rng.integers(0, 4, int(rng.integers(1, 6))).tolist()
        values = rng.integers(-5, 6, sum(counts)).tolist()
        offsets = _util.offsets_from_counts(np.array(counts))
        got = _util.segment_cumsum(np.array(values, dtype=np.int64), offsets, _util.segment_ids(offsets))
        assert got.tolist() == brute_force_running(values, counts), (values, counts)


def test_segment_running_sum_adds_in_order_bit_for_bit():
    rng = np.random.default_rng(9)
    cases = [([], [0, 0]), ([1e16, 1.0, 1.0, -1e16], [4]), ([0.1, 0.2, 0.3], [1, 0, 2])]
    for _ in range(150):
        counts = rng.integers(0, 5, int(rng.integers(1, 6))).tolist()
        values = (rng.random(sum(counts)) * 10.0 ** rng.integers(-3, 17, sum(counts))).tolist()
        cases.append((values, counts))
    for values, counts in cases:
        offsets = _util.offsets_from_counts(np.array(counts, dtype=np.int64))
        got = _util.segment_running_sum(np.array(values, dtype=np.float64), offsets)
        assert got.dtype == np.float64
        assert got.tolist() == brute_force_running([float(v) for v in values], counts), (values, counts)
    assert _util.segment_running_sum(np.zeros(0), np.array([0])).tolist() == []


def test_segment_sum_keeps_trailing_empty_segments():
    sums = _util.segment_sum(np.array([1.5, 2.0]), np.array([1, 1]), 3)
    assert sums.dtype == np.float64 and sums.tolist() == [0.0, 3.5, 0.0]
    counts = _util.segment_sum(None, np.array([0, 2, 2]), 4)  # no weights: a count per segment, as float64
    assert counts.dtype == np.float64 and counts.tolist() == [1.0, 0.0, 2.0, 0.0]


def brute_force_match(counts: list[int], row_doc: list[int], judged_query: list[int], judged_doc: list[int]):
    judgment_of = {(q, d): j for j, (q, d) in enumerate(zip(judged_query, judged_doc))}
    rows, judgments, position = [], [], 0
    for query, count in enumerate(counts):
        for row in range(position, position + count):
            if row_doc[row] >= 0 and (query, row_doc[row]) in judgment_of:
                rows.append(row)
                judgments.append(judgment_of[query, row_doc[row]])
        position += count
    return rows, judgments


def random_matching_case(rng, dense: bool):
    num_queries, num_docs = int(rng.integers(1, 7)), int(rng.integers(1, 9))
    counts = [int(rng.integers(0, 5))] * num_queries if dense else rng.integers(0, 5, num_queries).tolist()
    row_doc = rng.integers(-1, num_docs, sum(counts)).tolist()  # -1: padding
    pairs = sorted({(int(rng.integers(0, num_queries + 2)), int(rng.integers(0, num_docs)))  # + queries not in the run
                    for _ in range(int(rng.integers(0, 12)))})
    order = rng.permutation(len(pairs))
    judged_query = [pairs[i][0] for i in order]
    judged_doc = [pairs[i][1] for i in order]
    return counts, row_doc, judged_query, judged_doc, num_docs


def test_match_judgments_agrees_with_a_brute_force(monkeypatch):
    rng = np.random.default_rng(12)
    # budgets: every query in one block; 1, 2, 3 queries a block; a budget under a quarter of the vocabulary (the
    # hash join)
    for budget in (1 << 18, 8, 16, 24, 1):
        monkeypatch.setattr(_util, "_TABLE_BUDGET", budget)
        for trial in range(150):
            counts, row_doc, judged_query, judged_doc, num_docs = random_matching_case(rng, dense=trial % 2 == 0)
            if budget == 8:
                num_docs = 8  # exactly one query a block
            rows, judgments = _util.match_judgments(
                _util.offsets_from_counts(np.array(counts, dtype=np.int64)), np.array(row_doc, dtype=np.int64),
                np.array(judged_query, dtype=np.int64), np.array(judged_doc, dtype=np.int64), num_docs)
            expected = brute_force_match(counts, row_doc, judged_query, judged_doc)
            assert (rows.tolist(), judgments.tolist()) == expected, (budget, counts, row_doc, judged_query, judged_doc)
            assert rows.dtype == np.int64 and judgments.dtype == np.int64


def test_match_judgments_by_hand_across_blocks(monkeypatch):
    monkeypatch.setattr(_util, "_TABLE_BUDGET", 4)  # num_docs 4: one query a block
    offsets = np.array([0, 2, 4, 6, 8])
    row_doc = np.array([0, 1, 0, 1, 0, 1, 2, 3])
    # query 0 has no judgment (a block skipped, not the end), query 1 judges doc 1, query 3 doc 2; a judgment of
    # query 1 left in the table would match query 2's doc 1
    rows, judgments = _util.match_judgments(offsets, row_doc, np.array([3, 1]), np.array([2, 1]), 4)
    assert rows.tolist() == [3, 6] and judgments.tolist() == [1, 0]
    # a single query (its depth read from its own row count)
    rows, judgments = _util.match_judgments(np.array([0, 3]), np.array([2, -1, 0]), np.array([0, 0]),
                                            np.array([0, 2]), 3)
    assert rows.tolist() == [0, 2] and judgments.tolist() == [1, 0]


def test_match_judgments_with_nothing_to_match():
    empty = np.zeros(0, dtype=np.int64)
    offsets, row_doc = np.array([0, 2]), np.array([0, 1])
    cases = [
        (offsets, row_doc, np.array([0]), np.array([1]), 0),  # no document vocabulary
        (offsets, row_doc, np.array([0]), np.array([1]), -1),
        (offsets, row_doc, empty, empty, 2),  # no judgment
        (np.array([0, 0]), empty, np.array([0]), np.array([1]), 2),  # no retrieved row
        (offsets, row_doc, np.array([3, 5]), np.array([0, 1]), 2),  # judgments of queries not in the run only
    ]
    for case in cases:
        rows, judgments = _util.match_judgments(*case)
        assert rows.dtype == np.int64 and judgments.dtype == np.int64
        assert rows.tolist() == [] and judgments.tolist() == [], case


def test_match_judgments_turns_to_the_hash_join_past_four_table_budgets(monkeypatch):
    calls = []
    by_hash = _util._match_by_hash

    def spy(*args):
        calls.append(args[-1])
        return by_hash(*args)

    monkeypatch.setattr(_util, "_match_by_hash", spy)
    budget = 1 << 18  # table entries: 1 MiB of int32, one query's row of documents at the least
    for num_docs in (budget // 2, budget, 4 * budget, 4 * budget + 1):
        rows, judgments = _util.match_judgments(np.array([0, 2, 3]), np.array([num_docs - 1, 5, num_docs - 1]),
                                                np.array([1, 0]), np.array([num_docs - 1, num_docs - 1]), num_docs)
        assert rows.tolist() == [0, 2] and judgments.tolist() == [1, 0], num_docs
    assert calls == [4 * budget + 1]  # the dense table up to 4 budgets (16 MB of int32), hashing past it


def brute_force_codes(codes: list[int], names: list[str]) -> tuple[list[int], list[str]]:
    ordered = sorted(names)  # Python compares str by code point
    return [ordered.index(names[c]) for c in codes], ordered


NAMES = ["z", "", "é", "\U0001F600", "\uffff", "a", "a\x00", "Z", "10", "9", "ab"]


def test_codes_follow_the_names_in_code_point_order():
    rng = np.random.default_rng(13)
    for _ in range(100):
        # (through indices: a numpy str array would drop the trailing NUL of "a\x00")
        names = [NAMES[i] for i in rng.permutation(len(NAMES))[:int(rng.integers(0, len(NAMES) + 1))]]
        codes = rng.integers(0, len(names), int(rng.integers(0, 8))).tolist() if names else []
        got_codes, got_names = _util.codes_in_name_order(np.array(codes, dtype=np.int64),
                                                         np.array(names, dtype=object))
        expected_codes, expected_names = brute_force_codes(codes, names)
        assert got_codes.dtype == np.int64 and got_codes.tolist() == expected_codes
        assert got_names.dtype == object and got_names.tolist() == expected_names


def test_lexicographic_codes_by_hand_and_by_brute_force():
    codes, names = _util.lexicographic_codes(np.array(["b", "é", "a", "b", "B"], dtype=object))
    assert names.tolist() == ["B", "a", "b", "é"] and codes.tolist() == [2, 3, 1, 2, 0]
    rng = np.random.default_rng(14)
    for _ in range(100):
        values = [NAMES[i] for i in rng.integers(0, len(NAMES), int(rng.integers(0, 10)))]
        codes, names = _util.lexicographic_codes(np.array(values, dtype=object))
        assert names.tolist() == sorted(set(values))
        assert [names[c] for c in codes.tolist()] == values


def by_value(a: float, b: float) -> int:
    return (a > b) - (a < b)  # NaN ties everything: not a consistent order


def test_glibc_merge_sort_by_hand():
    nan = float("nan")
    # halves of n // 2 and n - n // 2, left wins ties (computed by hand through msort.c's recursion)
    assert repr(_util.glibc_merge_sort([3.0, nan, 1.0], by_value)) == repr([3.0, nan, 1.0])
    assert repr(_util.glibc_merge_sort([2.0, nan, 1.0, 0.0], by_value)) == repr([0.0, 1.0, 2.0, nan])
    assert repr(_util.glibc_merge_sort([nan, 2.0, 1.0], by_value)) == repr([nan, 1.0, 2.0])
    pairs = [(1, "a"), (0, "b"), (1, "c"), (0, "d"), (1, "e")]
    assert _util.glibc_merge_sort(pairs, lambda x, y: x[0] - y[0]) == [(0, "b"), (0, "d"), (1, "a"), (1, "c"),
                                                                      (1, "e")]
    assert _util.glibc_merge_sort([], by_value) == [] and _util.glibc_merge_sort([4.0], by_value) == [4.0]


def test_glibc_merge_sort_is_a_stable_sort_for_a_consistent_order():
    rng = np.random.default_rng(15)
    for _ in range(200):
        items = [(int(k), i) for i, k in enumerate(rng.integers(0, 4, int(rng.integers(0, 12))))]
        assert _util.glibc_merge_sort(list(items), lambda x, y: x[0] - y[0]) == sorted(items, key=lambda x: x[0])
        assert _util.glibc_merge_sort(list(items), lambda x, y: y[0] - x[0]) == sorted(items, key=lambda x: -x[0])
