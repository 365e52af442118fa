"""The judged documents of every evaluated ranking, as the macro measures read them (numpy only).

The base of the macro modules: :mod:`macro_context`, :mod:`macro_rank`, :mod:`macro_gain` and :mod:`macro` build
on it and it imports none of them. See :mod:`evaluation.core.macro` for the representation and the relevance
conventions.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from evaluation.core._util import match_judgments, offsets_from_counts, segment_ids


@dataclass(frozen=True)
class JudgedRanking:
    """Judged retrieved documents of every evaluated query, in rank order (CSR layout).

    ``offsets[q]:offsets[q+1]`` slices ``ranks`` (1-based, ascending, float64) and ``relevance``
    (int64) of query q. ``ideal_offsets`` slices ``ideal_gains``: the relevance values > 0 of all
    judged docs of q (retrieved or not), sorted descending.
    """

    offsets: np.ndarray
    ranks: np.ndarray
    relevance: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    num_ret: np.ndarray
    ideal_offsets: np.ndarray
    ideal_gains: np.ndarray
    relevance_level: int = 1
    query_ids: np.ndarray | None = None

    @property
    def num_queries(self) -> int:
        return len(self.offsets) - 1

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_judgments(
        cls,
        num_queries: int,
        query: np.ndarray,
        rank: np.ndarray,
        relevance: np.ndarray,
        num_ret: np.ndarray | int | None = None,
        *,
        relevance_level: int = 1,
        query_ids: np.ndarray | Sequence[str] | None = None,
    ) -> "JudgedRanking":
        """Build from one row per judgment: query index, rank in the run, relevance label.

        ``rank`` is the 1-based position of the judged document in the query's ranking (may be
        fractional), or ``inf`` / ``nan`` when the run did not retrieve it. Non-retrieved judgments
        still count in R, in the bpref denominator and in the ideal DCG. ``num_ret`` (scalar or per
        query) is the length of each retrieved list: ranks above it count as not retrieved. Default:
        every finite rank is retrieved and num_ret is reported as the largest judged rank (floor).
        """
        query = np.asarray(query, dtype=np.int64)
        rank = np.asarray(rank, dtype=np.float64)
        relevance = np.asarray(relevance, dtype=np.int64)
        if not (len(query) == len(rank) == len(relevance)):
            raise ValueError("query, rank and relevance must have the same length")
        if len(query) and (query.min() < 0 or query.max() >= num_queries):
            raise ValueError(f"query indices must lie in [0, {num_queries})")
        finite = np.isfinite(rank)
        if np.any(rank[finite] < 1):
            raise ValueError("ranks are 1-based: every finite rank must be >= 1")

        if num_ret is None:
            num_ret_arr = np.zeros(num_queries, dtype=np.int64)
            if finite.any():
                np.maximum.at(num_ret_arr, query[finite], np.floor(rank[finite]).astype(np.int64))
        else:
            num_ret_arr = np.broadcast_to(np.asarray(num_ret, dtype=np.int64), (num_queries,)).copy()

        is_relevant = relevance >= relevance_level
        is_nonrelevant = (relevance >= 0) & ~is_relevant
        num_rel = np.bincount(query[is_relevant], minlength=num_queries).astype(np.int64)
        num_nonrel = np.bincount(query[is_nonrelevant], minlength=num_queries).astype(np.int64)

        # Ideal gains: all positive relevance values, per query, descending.
        positive = relevance > 0
        gain_query, gains = query[positive], relevance[positive]
        order = np.lexsort((-gains, gain_query))
        ideal_offsets = offsets_from_counts(np.bincount(gain_query, minlength=num_queries))

        retrieved = finite & (rank <= num_ret_arr[query] + 1e-9) if num_ret is not None else finite
        r_query, r_rank, r_rel = query[retrieved], rank[retrieved], relevance[retrieved]
        # Stable sort: equal ranks keep their input order.
        order_ret = np.lexsort((r_rank, r_query))
        offsets = offsets_from_counts(np.bincount(r_query, minlength=num_queries))

        ids = None if query_ids is None else np.asarray(query_ids, dtype=object)
        if ids is not None and len(ids) != num_queries:
            raise ValueError("query_ids must have one entry per query")
        return cls(
            offsets=offsets,
            ranks=r_rank[order_ret],
            relevance=r_rel[order_ret],
            num_rel=num_rel,
            num_nonrel=num_nonrel,
            num_ret=num_ret_arr,
            ideal_offsets=ideal_offsets,
            ideal_gains=gains[order].astype(np.float64),
            relevance_level=relevance_level,
            query_ids=ids,
        )

    @classmethod
    def from_judged_ranks(
        cls,
        num_queries: int,
        relevant_query: np.ndarray,
        relevant_rank: np.ndarray,
        nonrelevant_query: np.ndarray | None = None,
        nonrelevant_rank: np.ndarray | None = None,
        *,
        relevant_gain: np.ndarray | None = None,
        num_ret: np.ndarray | int | None = None,
        query_ids: np.ndarray | Sequence[str] | None = None,
    ) -> "JudgedRanking":
        """kgpool engine entry point: ranks of every relevant answer (and judged negative) per question.

        One row per (question index, rank) for every answer of the question under the label set,
        whether the system retrieved it or not (``inf`` / rank > ``num_ret`` = not retrieved); likewise
        for the judged negatives of the completed label set. ``relevant_gain`` gives graded relevance
        (default 1). Ranks may be fractional (see the module docstring). No strings, no dicts.
        """
        relevant_query = np.asarray(relevant_query, dtype=np.int64)
        gains = (np.ones(len(relevant_query), dtype=np.int64) if relevant_gain is None
                 else np.asarray(relevant_gain, dtype=np.int64))
        if np.any(gains < 1):
            raise ValueError("relevant_gain must be >= 1")
        if nonrelevant_query is None:
            nonrelevant_query = np.zeros(0, dtype=np.int64)
            nonrelevant_rank = np.zeros(0, dtype=np.float64)
        nonrelevant_query = np.asarray(nonrelevant_query, dtype=np.int64)
        return cls.from_judgments(
            num_queries,
            np.concatenate((relevant_query, nonrelevant_query)),
            np.concatenate((np.asarray(relevant_rank, dtype=np.float64),
                            np.asarray(nonrelevant_rank, dtype=np.float64))),
            np.concatenate((gains, np.zeros(len(nonrelevant_query), dtype=np.int64))),
            num_ret=num_ret,
            query_ids=query_ids,
        )

    @classmethod
    def from_topk(
        cls,
        candidates: np.ndarray,
        judged_query: np.ndarray,
        judged_doc: np.ndarray,
        judged_relevance: np.ndarray,
        scores: np.ndarray | None = None,
        *,
        relevance_level: int = 1,
        query_ids: np.ndarray | Sequence[str] | None = None,
    ) -> "JudgedRanking":
        """Build from a dense top-k run: ``candidates[q]`` holds the doc ids retrieved for query q.

        Without ``scores`` the column order is the ranking (rank = column + 1), as a sorted top-k from
        the engine gives it. With ``scores`` the ranking follows trec_eval: score descending, ties
        broken by doc id *descending* (pass ids whose integer order is the doc name order, e.g. from
        ``_util.lexicographic_codes``, to reproduce trec_eval's string tie-break exactly).
        Pad short lists with doc id -1 (and score -inf). Judgments are (query row, doc id, relevance);
        judged docs absent from the row count as not retrieved. Cost: one cache-resident table gather
        per candidate; with ``scores``, rows not already in trec order are sorted first.
        """
        candidates = np.asarray(candidates)
        if candidates.ndim != 2:
            raise ValueError("candidates must be a 2-D array (queries x depth)")
        num_queries, depth = candidates.shape
        judged_query = np.asarray(judged_query, dtype=np.int64)
        judged_doc = np.asarray(judged_doc, dtype=np.int64)
        if scores is not None:
            candidates = _rows_in_trec_order(candidates, np.asarray(scores, dtype=np.float64))
        num_docs = int(max(candidates.max(initial=-1), judged_doc.max(initial=-1))) + 1
        row_offsets = np.arange(num_queries + 1, dtype=np.int64) * depth
        rows, judgments = match_judgments(row_offsets, candidates.reshape(-1), judged_query, judged_doc,
                                          num_docs)
        rank = np.full(len(judged_query), np.inf)
        rank[judgments] = rows % depth + 1.0
        num_ret = (candidates >= 0).sum(axis=1)
        return cls.from_judgments(num_queries, judged_query, rank, judged_relevance, num_ret,
                                  relevance_level=relevance_level, query_ids=query_ids)

    # ------------------------------------------------------------------ trec_eval options
    def _keeping(self, keep: np.ndarray, ranks: np.ndarray, num_ret: np.ndarray) -> "JudgedRanking":
        query = segment_ids(self.offsets)[keep]
        return replace(self, offsets=offsets_from_counts(np.bincount(query, minlength=self.num_queries)),
                       ranks=ranks[keep], relevance=self.relevance[keep], num_ret=num_ret)

    def truncated(self, max_retrieved: int) -> "JudgedRanking":
        """trec_eval ``-M``: only the first ``max_retrieved`` documents of every ranking count."""
        return self._keeping(self.ranks <= max_retrieved, self.ranks,
                             np.minimum(self.num_ret, max(max_retrieved, 0)))

    def judged_only(self) -> "JudgedRanking":
        """trec_eval ``-J``: documents not judged (absent from the qrels, or judged < 0) leave the rankings.

        The judged ones close up (ranks 1, 2, ... in their order) and num_ret counts only them.
        """
        keep = self.relevance >= 0
        seg = segment_ids(self.offsets)[keep]
        counts = np.bincount(seg, minlength=self.num_queries)
        ranks = np.zeros(len(self.ranks))
        ranks[keep] = np.arange(int(keep.sum())) - offsets_from_counts(counts)[seg] + 1.0
        return self._keeping(keep, ranks, counts.astype(np.int64))

    def with_num_ret(self, num_ret: np.ndarray) -> "JudgedRanking":
        """The same judged documents with other retrieved-list lengths (e.g. trec_eval -c's one-doc rankings)."""
        return replace(self, num_ret=np.asarray(num_ret, dtype=np.int64))


def _rows_in_trec_order(candidates: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Candidates with each row in trec_eval order; only rows not already in order are sorted."""
    if scores.shape != candidates.shape:
        raise ValueError("scores must have the shape of candidates")
    ahead = (scores[:, 1:] > scores[:, :-1]) | ((scores[:, 1:] == scores[:, :-1])
                                               & (candidates[:, 1:] > candidates[:, :-1]))
    unsorted = np.flatnonzero(ahead.any(axis=1))
    if len(unsorted) == 0:
        return candidates
    rows, row_scores = candidates[unsorted], scores[unsorted]
    order = np.lexsort((-rows.astype(np.int64), -row_scores), axis=-1)
    candidates = candidates.copy()
    candidates[unsorted] = np.take_along_axis(rows, order, axis=-1)
    return candidates
