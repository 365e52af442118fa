"""Question-wise (macro, IR-style) metrics with exact trec_eval 10 semantics, from arrays.

Representation
--------------
A :class:`JudgedRanking` keeps, for every evaluated query, only the *judged documents that were
retrieved*, as flat CSR arrays (``offsets`` into ``ranks`` / ``relevance``) sorted by rank, plus
per-query counts: ``num_rel`` (R), ``num_nonrel`` (judged non-relevant), ``num_ret`` (length of the
retrieved list) and the positive relevance values of *all* judged docs (for the ideal DCG).
That is all trec_eval's measures need: an unjudged retrieved document only ever matters through its
position, which the rank of the judged documents already encodes.

Relevance conventions (trec_eval, relevance level 1 by default):
- ``relevance >= relevance_level``: relevant; ``0 <= relevance < relevance_level``: judged non-relevant;
- ``relevance < 0``: in the pool but not judged (trec_eval's RELVALUE_UNJUDGED: counted by infAP's
  "pool unjudged so far", ignored by bpref, never relevant);
- documents absent from the qrels: unjudged (not in the CSR arrays at all).
- nDCG gain is the relevance value itself for every value > 0; discount 1/log2(rank + 1); the ideal
  DCG sorts all judged positive values descending. AP@k divides by R, not min(R, k).

Fractional ranks (kgpool's own engine with the *realistic* tie policy) are accepted everywhere: every
formula is evaluated at the given rank value (precision at a relevant doc = relevant so far / rank,
DCG discount 1/log2(rank + 1), cut-offs include rank <= k). Entries sharing a rank keep their input
order. With integer ranks (a run file, or the optimistic / pessimistic policies) this *is* trec_eval.

Averaging: trec_eval averages over the queries that are in both the run and the qrels, including
queries whose judgments are all non-relevant (they score 0). ``mean_over_queries`` does that by
default; ``only_with_relevant=True`` restricts to queries with R >= 1.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from evaluation.core._util import (
    match_judgments, offsets_from_counts, segment_cumsum, segment_ids, segment_sum,
)

#: trec_eval's default cut-offs for the parameterised measures.
DEFAULT_CUTOFFS: dict[str, tuple[int, ...]] = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
PLAIN_MEASURES: tuple[str, ...] = (
    "map", "ndcg", "recip_rank", "Rprec", "bpref", "infAP", "num_ret", "num_rel", "num_rel_ret",
)
#: Measures whose "all" value trec_eval reports as a sum over queries, not a mean.
SUMMED_MEASURES: frozenset[str] = frozenset({"num_ret", "num_rel", "num_rel_ret"})
#: trec_eval's infAP smoothing constant.
INFAP_EPSILON = 0.00001

_CUT_RE = re.compile(r"^(P|map_cut|ndcg_cut|success)_(\d+)$")


class UnknownMeasureError(ValueError):
    """A measure name that this module does not implement."""


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


# ---------------------------------------------------------------------- measure names
def parse_measure(name: str) -> tuple[str, int | None]:
    """'P_10' -> ('P', 10); 'map' -> ('map', None). Raises UnknownMeasureError."""
    match = _CUT_RE.match(name)
    if match:
        cutoff = int(match.group(2))
        if cutoff < 1:
            raise UnknownMeasureError(f"cut-off must be positive in {name!r}")
        return match.group(1), cutoff
    if name in PLAIN_MEASURES:
        return name, None
    raise UnknownMeasureError(f"unknown measure {name!r}")


def expand_measures(requested: Iterable[str]) -> list[str]:
    """Expand trec_eval-style requests: 'P' (default cut-offs), 'P.5,10', 'ndcg_cut_20', 'all_trec'.

    Keeps the first occurrence order and drops duplicates; raises UnknownMeasureError.
    """
    expanded: list[str] = []
    for item in requested:
        if item == "all_trec":
            names = [m for m in PLAIN_MEASURES]
            for base, cutoffs in DEFAULT_CUTOFFS.items():
                names += [f"{base}_{k}" for k in cutoffs]
        elif "." in item:
            base, _, params = item.partition(".")
            if base not in DEFAULT_CUTOFFS or not params:
                raise UnknownMeasureError(f"unknown measure {item!r}")
            try:
                cutoffs = [int(p) for p in params.split(",")]
            except ValueError as exc:
                raise UnknownMeasureError(f"bad cut-offs in {item!r}") from exc
            names = [f"{base}_{k}" for k in cutoffs]
        elif item in DEFAULT_CUTOFFS:
            names = [f"{item}_{k}" for k in DEFAULT_CUTOFFS[item]]
        else:
            names = [item]
        for name in names:
            parse_measure(name)
            if name not in expanded:
                expanded.append(name)
    return expanded


# ---------------------------------------------------------------------- evaluation
class _Context:
    """Lazily computed per-entry quantities shared by several measures."""

    def __init__(self, jr: JudgedRanking) -> None:
        self.jr = jr
        self.n = jr.num_queries
        self.seg = segment_ids(jr.offsets)
        self.is_rel = jr.relevance >= jr.relevance_level
        self.num_rel_f = jr.num_rel.astype(np.float64)
        self._cache: dict[str, np.ndarray] = {}

    def get(self, key: str) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = getattr(self, "_" + key)()
        return self._cache[key]

    def _rel_so_far(self) -> np.ndarray:  # relevant docs at or above each entry
        return segment_cumsum(self.is_rel.astype(np.int64), self.jr.offsets, self.seg)

    def _precision_at_rel(self) -> np.ndarray:  # precision at each relevant entry, 0 elsewhere
        return np.where(self.is_rel, self.get("rel_so_far") / self.jr.ranks, 0.0)

    def _nonrel_so_far(self) -> np.ndarray:
        jr = self.jr
        nonrel = (jr.relevance >= 0) & ~self.is_rel
        return segment_cumsum(nonrel.astype(np.int64), jr.offsets, self.seg)

    def _unjudged_so_far(self) -> np.ndarray:
        return segment_cumsum((self.jr.relevance < 0).astype(np.int64), self.jr.offsets, self.seg)

    def _first_rel_rank(self) -> np.ndarray:  # inf where nothing relevant was retrieved
        first = np.full(self.n, np.inf)
        rel_seg = self.seg[self.is_rel]
        if len(rel_seg):
            is_first = np.concatenate(([True], rel_seg[1:] != rel_seg[:-1]))
            first[rel_seg[is_first]] = self.jr.ranks[self.is_rel][is_first]
        return first

    def _gain_discounted(self) -> np.ndarray:
        gains = np.where(self.jr.relevance > 0, self.jr.relevance, 0).astype(np.float64)
        return gains / np.log2(self.jr.ranks + 1.0)

    def _ideal_discounted(self) -> np.ndarray:
        jr = self.jr
        ideal_seg = segment_ids(jr.ideal_offsets)
        position = np.arange(len(jr.ideal_gains)) - jr.ideal_offsets[ideal_seg]
        self._cache["ideal_position"] = position
        self._cache["ideal_seg"] = ideal_seg
        return jr.ideal_gains / np.log2(position + 2.0)

    def divide_by_num_rel(self, totals: np.ndarray) -> np.ndarray:
        return np.divide(totals, self.num_rel_f, out=np.zeros(self.n), where=self.num_rel_f > 0)

    def ndcg(self, cutoff: int | None) -> np.ndarray:
        discounted = self.get("gain_discounted")
        ideal = self.get("ideal_discounted")
        if cutoff is not None:
            discounted = np.where(self.jr.ranks <= cutoff, discounted, 0.0)
            ideal = np.where(self._cache["ideal_position"] < cutoff, ideal, 0.0)
        dcg = segment_sum(discounted, self.seg, self.n)
        idcg = segment_sum(ideal, self._cache["ideal_seg"], self.n)
        # trec_eval leaves the (zero) DCG as is when the ideal DCG is zero.
        return np.divide(dcg, idcg, out=dcg.copy(), where=idcg > 0)


def _measure(ctx: _Context, base: str, cutoff: int | None) -> np.ndarray:
    jr = ctx.jr
    if base == "map":
        return ctx.divide_by_num_rel(segment_sum(ctx.get("precision_at_rel"), ctx.seg, ctx.n))
    if base == "map_cut":
        precision = np.where(jr.ranks <= cutoff, ctx.get("precision_at_rel"), 0.0)
        return ctx.divide_by_num_rel(segment_sum(precision, ctx.seg, ctx.n))
    if base == "P":
        hits = (ctx.is_rel & (jr.ranks <= cutoff)).astype(np.float64)
        return segment_sum(hits, ctx.seg, ctx.n) / cutoff
    if base == "recip_rank":
        return 1.0 / ctx.get("first_rel_rank")
    if base == "success":
        return (ctx.get("first_rel_rank") <= cutoff).astype(np.float64)
    if base == "Rprec":
        hits = (ctx.is_rel & (jr.ranks <= jr.num_rel[ctx.seg])).astype(np.float64)
        return ctx.divide_by_num_rel(segment_sum(hits, ctx.seg, ctx.n))
    if base in ("ndcg", "ndcg_cut"):
        return ctx.ndcg(cutoff)
    if base == "bpref":
        nonrel_before = ctx.get("nonrel_so_far")[ctx.is_rel].astype(np.float64)
        rel_seg = ctx.seg[ctx.is_rel]
        num_rel = ctx.num_rel_f[rel_seg]
        denominator = np.minimum(jr.num_nonrel[rel_seg], num_rel)
        penalty = np.divide(np.minimum(nonrel_before, num_rel), denominator,
                            out=np.zeros_like(num_rel), where=nonrel_before > 0)
        return ctx.divide_by_num_rel(segment_sum(1.0 - penalty, rel_seg, ctx.n))
    if base == "infAP":
        rel_seg = ctx.seg[ctx.is_rel]
        rank = jr.ranks[ctx.is_rel]
        rel_before = ctx.get("rel_so_far")[ctx.is_rel] - 1.0
        nonrel_before = ctx.get("nonrel_so_far")[ctx.is_rel].astype(np.float64)
        unjudged_before = ctx.get("unjudged_so_far")[ctx.is_rel].astype(np.float64)
        # trec_eval: 1/(j+1) + j/(j+1) * (judged or pooled above / j) * (smoothed precision above),
        # with j = rank - 1; the j's cancel, which also covers the rank-1 special case.
        expected = 1.0 / rank + ((rel_before + nonrel_before + unjudged_before) / rank) * (
            (rel_before + INFAP_EPSILON) / (rel_before + nonrel_before + 2 * INFAP_EPSILON))
        return ctx.divide_by_num_rel(segment_sum(expected, rel_seg, ctx.n))
    if base == "num_ret":
        return jr.num_ret.astype(np.float64)
    if base == "num_rel":
        return ctx.num_rel_f.copy()
    if base == "num_rel_ret":
        return segment_sum(ctx.is_rel.astype(np.float64), ctx.seg, ctx.n)
    raise UnknownMeasureError(f"unknown measure {base!r}")


def evaluate(judged_ranking: JudgedRanking, measures: Iterable[str]) -> dict[str, np.ndarray]:
    """Per-query values (float64 arrays of length num_queries) of each measure, in query order.

    Measure names as trec_eval prints them: map, map_cut_20, ndcg, ndcg_cut_20, P_10, recip_rank,
    success_10, Rprec, bpref, infAP, num_ret, num_rel, num_rel_ret.
    """
    ctx = _Context(judged_ranking)
    return {name: _measure(ctx, *parse_measure(name)) for name in measures}


def mean_over_queries(
    per_query: Mapping[str, np.ndarray],
    judged_ranking: JudgedRanking,
    *,
    only_with_relevant: bool = False,
) -> dict[str, float]:
    """trec_eval's "all" row: the mean over evaluated queries (sum for num_ret/num_rel/num_rel_ret).

    ``only_with_relevant`` averages over the queries with at least one relevant document only.
    """
    mask = judged_ranking.num_rel > 0 if only_with_relevant else np.ones(judged_ranking.num_queries, bool)
    summary: dict[str, float] = {}
    for name, values in per_query.items():
        selected = values[mask]
        if name in SUMMED_MEASURES:
            summary[name] = float(selected.sum())
        else:
            summary[name] = float(selected.mean()) if len(selected) else 0.0
    return summary
