"""Small vectorised helpers shared by the metric modules (numpy only, no Django)."""
from __future__ import annotations

import numpy as np


def offsets_from_counts(counts: np.ndarray) -> np.ndarray:
    """CSR offsets (length n+1, int64) from per-segment counts."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """Segment index of every element of a CSR layout."""
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def segment_cumsum(values: np.ndarray, offsets: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Inclusive running sum of `values` restarting at every segment start."""
    running = np.cumsum(values, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    before_segment = np.concatenate(([0], running))[offsets[:-1]]
    return running - before_segment[seg]


def segment_running_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive running sum within each segment, added in order as a C loop adds (bit for bit).

    ``segment_cumsum`` subtracts a global running sum and can be a few ulps off; this one loops over
    positions (as many iterations as the longest segment), vectorised across segments.
    """
    out = np.empty(len(values), dtype=np.float64)
    lengths = np.diff(offsets)
    running = np.zeros(len(lengths))
    active = np.flatnonzero(lengths > 0)
    for position in range(int(lengths.max(initial=0))):
        active = active[lengths[active] > position]
        index = offsets[active] + position
        running[active] += values[index]
        out[index] = running[active]
    return out


def segment_sum(weights: np.ndarray, seg: np.ndarray, num_segments: int) -> np.ndarray:
    """Per-segment sum as float64 (bincount is the fastest grouped sum numpy has)."""
    # bincount answers int64 when it is given no rows at all, even with float weights: keep the promised dtype.
    return np.bincount(seg, weights=weights, minlength=num_segments).astype(np.float64, copy=False)


def lexicographic_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes for string values such that code order == string (code point) order.

    Hash-factorises first (fast on millions of strings), then sorts only the distinct values.
    Code-point order equals trec_eval's strcmp byte order for UTF-8 text.
    """
    import pandas as pd  # local: pandas is only needed on the string paths

    codes, uniques = pd.factorize(values, sort=False)
    return codes_in_name_order(codes, np.asarray(uniques, dtype=object))


def codes_in_name_order(codes: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` into the distinct ``names`` (object array of str) -> codes into the sorted names, and those.

    Sorted as Python lists of str (code-point order, stable), never through a fixed-width unicode array:
    ``astype(str)`` sizes every name by the longest one (4 bytes a character), so one 1M-character id among a
    million short ones would ask for 4 TB; list sorting is also faster on many short ids.
    """
    values = names.tolist()
    order = np.fromiter(sorted(range(len(values)), key=values.__getitem__), dtype=np.int64, count=len(values))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order), dtype=np.int64)
    return position[np.asarray(codes)], names[order]


#: Entries of the dense (query block x document) lookup table used by `match_judgments` (int32).
_TABLE_BUDGET = 1 << 18


def match_judgments(
    row_offsets: np.ndarray,
    row_doc: np.ndarray,
    judged_query: np.ndarray,
    judged_doc: np.ndarray,
    num_docs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Find which retrieved rows are judged documents of their query.

    Rows are grouped by query in CSR form (``row_offsets``, one segment per query, doc ids in
    ``row_doc``; negative ids are padding). Returns ``(rows, judgments)``: the flat row index and the
    judgment index of every match. Works block-wise through a dense (queries x docs) table small
    enough to stay in cache, so each retrieved row costs one gather; the Python loop runs over
    blocks of queries, not over queries.
    """
    num_queries = len(row_offsets) - 1
    judged_query = np.asarray(judged_query, dtype=np.int64)
    judged_doc = np.asarray(judged_doc, dtype=np.int64)
    if num_docs <= 0 or len(judged_query) == 0 or len(row_doc) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    block = max(1, _TABLE_BUDGET // num_docs)
    if block == 1 and num_docs > 4 * _TABLE_BUDGET:
        return _match_by_hash(row_offsets, row_doc, judged_query, judged_doc, num_docs)
    judgment_order = np.argsort(judged_query, kind="stable")
    judged_offsets = offsets_from_counts(np.bincount(judged_query, minlength=num_queries))
    # Table slot of every judgment inside its block, and the value stored there (judgment + 1).
    sorted_query = judged_query[judgment_order]
    all_slots = (sorted_query % block) * num_docs + judged_doc[judgment_order]
    all_values = (judgment_order + 1).astype(np.int32)
    sentinel = block * num_docs  # always-empty slot for padding rows
    table = np.zeros(sentinel + 1, dtype=np.int32)
    row_doc = row_doc.astype(np.int32, copy=False) if num_docs < 2**31 else row_doc
    has_padding = bool(row_doc.min() < 0)
    row_counts = np.diff(row_offsets)
    depth = int(row_counts[0]) if num_queries and np.all(row_counts == row_counts[0]) else None
    block_base = np.arange(block, dtype=row_doc.dtype) * row_doc.dtype.type(num_docs)
    rows_found: list[np.ndarray] = []
    judgments_found: list[np.ndarray] = []
    for start in range(0, num_queries, block):
        stop = min(start + block, num_queries)
        first_judged, last_judged = judged_offsets[start], judged_offsets[stop]
        if first_judged == last_judged:
            continue
        slots = all_slots[first_judged:last_judged]
        table[slots] = all_values[first_judged:last_judged]
        first_row, last_row = row_offsets[start], row_offsets[stop]
        docs = row_doc[first_row:last_row]
        if depth is not None:  # dense top-k: broadcast instead of repeat
            lookup = (docs.reshape(stop - start, depth) + block_base[:stop - start, None]).reshape(-1)
        else:
            lookup = docs + np.repeat(block_base[:stop - start], row_counts[start:stop])
        if has_padding:
            lookup[docs < 0] = sentinel
        hit = table[lookup]
        found = np.flatnonzero(hit)
        rows_found.append(found + first_row)
        judgments_found.append(hit[found].astype(np.int64) - 1)
        table[slots] = 0
    if not rows_found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows_found), np.concatenate(judgments_found)


def trec_order_violations(segment_starts_mask: np.ndarray, score: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Rows (index >= 1) that break trec_eval order w.r.t. the previous row of the same segment.

    trec_eval order: score descending, ties by doc id descending. ``segment_starts_mask[i]`` is True
    when row i starts a new segment (query).
    """
    ahead = (score[1:] > score[:-1]) | ((score[1:] == score[:-1]) & (doc[1:] > doc[:-1]))
    return np.flatnonzero(ahead & ~segment_starts_mask[1:]) + 1


def _match_by_hash(row_offsets, row_doc, judged_query, judged_doc, num_docs):
    """Fallback for huge vocabularies: hash join on (query, doc) keys."""
    import pandas as pd

    row_query = segment_ids(row_offsets)
    judged_key = judged_query * num_docs + judged_doc
    row_key = np.where(row_doc >= 0, row_query * num_docs + row_doc, -1)
    judgment = pd.Index(judged_key).get_indexer(row_key)
    rows = np.flatnonzero(judgment >= 0)
    return rows, judgment[rows]


def group_rows_by_query(query: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Make rows contiguous per query without sorting when they already are.

    Returns (order or None when the rows are already grouped, segment offsets, query of each
    segment) where segments refer to the rows after applying ``order``.
    """
    order = None
    change = np.flatnonzero(query[1:] != query[:-1]) + 1
    starts = np.concatenate(([0], change)).astype(np.int64) if len(query) else np.zeros(0, np.int64)
    if len(np.unique(query[starts])) != len(starts):  # some query appears in several blocks
        order = np.argsort(query, kind="stable")
        grouped = query[order]
        change = np.flatnonzero(grouped[1:] != grouped[:-1]) + 1
        starts = np.concatenate(([0], change)).astype(np.int64)
        segment_query = grouped[starts]
    else:
        segment_query = query[starts]
    offsets = np.concatenate((starts, [len(query)])).astype(np.int64)
    return order, offsets, segment_query


def has_duplicate_pairs(query: np.ndarray, doc: np.ndarray, num_docs: int) -> bool:
    """Whether some (query, doc) pair occurs twice; block-wise bincount, no hashing or sorting."""
    if len(query) < 2 or num_docs <= 0:
        return False
    order, offsets, _ = group_rows_by_query(query)
    if order is not None:
        doc = doc[order]
    doc = doc.astype(np.int64, copy=False)
    num_segments = len(offsets) - 1
    block = max(1, _TABLE_BUDGET // num_docs)
    counts = np.diff(offsets)
    for start in range(0, num_segments, block):
        stop = min(start + block, num_segments)
        local = np.repeat(np.arange(stop - start, dtype=np.int64) * num_docs, counts[start:stop])
        lookup = local + doc[offsets[start]:offsets[stop]]
        if np.bincount(lookup).max() > 1:
            return True
    return False


def glibc_merge_sort(items: list, compare) -> list:
    """``items`` in the order glibc's ``qsort`` (a top-down merge sort) leaves them for ``compare``.

    Only differs from any other stable sort when ``compare`` is not a consistent order (NaN scores,
    trec_eval's integer-truncated gain comparison): then the result depends on the algorithm, and this is
    the one trec_eval runs on Linux (msort.c: halves of n // 2 and n - n // 2, left wins ties).
    """
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = glibc_merge_sort(items[:half], compare), glibc_merge_sort(items[half:], compare)
    merged, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]
