"""trec_eval measures built on gain values: ndcg / dcg / ideal_dcg, ndcg_rel, Rndcg, G, ndcg_p and rbp.

Gains (gain_init.c): relevance level L has gain L unless ``-m ndcg.L=g,...`` says otherwise; docs not
in the qrels or judged < 0 have gain 0. The ideal ranking takes, per query, the table of levels
(levels 0 .. max judged level, plus the levels given as parameters) sorted by gain, and repeats each
level's gain as many times as the query has docs judged at that level, from the highest gain down to
the first level with a non-positive gain. trec_eval sorts that table with ``qsort`` and a comparator
returning ``(int) (gain1 - gain2)``, so gains less than 1 apart compare equal; :func:`_gain_order`
replays glibc's merge sort to order such tables as trec_eval does on Linux. These measures assume
integer ranks (a run file).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from evaluation.core._util import (
    glibc_merge_sort, offsets_from_counts, segment_cumsum, segment_ids, segment_running_sum, segment_sum,
)
from evaluation.core.macro_context import MeasureContext
from evaluation.core.measure_names import Measure


class Gains:
    """Gain of every judged retrieved entry and the ideal gain list of every query (CSR)."""

    def __init__(self, ctx: MeasureContext, pairs: dict[int, float], *, stop_on_any_level: bool = False) -> None:
        jr = ctx.jr
        self.ctx = ctx
        relevance = jr.relevance
        if pairs:
            table = np.array([pairs.get(level, float(level)) for level in range(int(relevance.max(initial=0)) + 1)])
            self.entry = np.where(relevance >= 0, table[np.clip(relevance, 0, None)], 0.0)
            self.ideal, self.ideal_offsets = _ideal_with_pairs(ctx, pairs, stop_on_any_level)
        else:
            self.entry = np.where(relevance > 0, relevance, 0).astype(np.float64)
            self.ideal, self.ideal_offsets = jr.ideal_gains, jr.ideal_offsets
        self.ideal_seg = segment_ids(self.ideal_offsets)
        self.ideal_length = np.diff(self.ideal_offsets)

    def dcg_entries(self) -> np.ndarray:
        return self.entry / np.log2(self.ctx.jr.ranks + 1.0)

    def ideal_prefix(self) -> np.ndarray:
        """Running ideal DCG at every ideal position, CSR like ``ideal``."""
        position = np.arange(len(self.ideal)) - self.ideal_offsets[self.ideal_seg]
        return segment_cumsum(self.ideal / np.log2(position + 2.0), self.ideal_offsets, self.ideal_seg)

    def ideal_at(self, prefix: np.ndarray, query: np.ndarray, count: np.ndarray) -> np.ndarray:
        """``prefix`` summed over the first ``count`` ideal positions of ``query`` (count clipped to the list)."""
        count = np.minimum(count, self.ideal_length[query]).astype(np.int64)
        out = np.zeros(len(query))
        some = count > 0
        out[some] = prefix[self.ideal_offsets[query[some]] + count[some] - 1]
        return out


@lru_cache(maxsize=256)
def _gain_order(entries: tuple[tuple[int, float], ...]) -> tuple[tuple[int, float], ...]:
    """(level, gain) entries in the order trec_eval's qsort leaves them (ascending gain, roughly)."""
    # C: return (ptr1->gain - ptr2->gain), converted to int: gains less than 1 apart compare equal
    return tuple(glibc_merge_sort(list(entries), lambda a, b: int(a[1] - b[1])))


def num_levels(ctx: MeasureContext) -> np.ndarray:
    """trec_eval's num_rel_levels: 1 + the highest level (>= 0) judged for the query, 0 if none."""
    jr = ctx.jr
    length = np.diff(jr.ideal_offsets)
    top = np.zeros(ctx.n)
    top[length > 0] = jr.ideal_gains[jr.ideal_offsets[:-1][length > 0]]  # ideal gains sort descending
    level_zero = (jr.num_rel + jr.num_nonrel - length) > 0
    return np.where(length > 0, top + 1, np.where(level_zero, 1, 0)).astype(np.int64)


def _ideal_with_pairs(ctx: MeasureContext, pairs: dict[int, float], stop_on_any_level: bool
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Ideal gain lists for explicit gains: per query, the sorted level table walked from the top."""
    jr = ctx.jr
    # docs judged at each level, per query: levels > 0 from the ideal gains, level 0 from the totals
    ideal_seg = segment_ids(jr.ideal_offsets)
    counts = np.zeros((ctx.n, int(jr.ideal_gains.max(initial=0)) + 1), dtype=np.int64)
    np.add.at(counts, (ideal_seg, jr.ideal_gains.astype(np.int64)), 1)
    counts[:, 0] = jr.num_rel + jr.num_nonrel - np.diff(jr.ideal_offsets)
    levels_of_query = num_levels(ctx)

    groups = []  # (rows, per-row repeat counts over the descending table, gains of that table)
    for levels_present in np.unique(levels_of_query):
        rows = np.flatnonzero(levels_of_query == levels_present)
        table = [(level, gain) for level, gain in pairs.items()]
        table += [(level, float(level)) for level in range(int(levels_present)) if level not in pairs]
        descending = _gain_order(tuple(table))[::-1]
        level = np.array([lv for lv, _ in descending], dtype=np.int64)
        gain = np.array([g for _, g in descending])
        present = level < levels_present
        level_count = np.zeros((len(rows), len(level)), dtype=np.int64)
        level_count[:, present] = counts[rows][:, level[present]]
        if stop_on_any_level:  # m_ndcg_p.c: the walk stops at the first non-positive gain it moves to; it
            # starts on the top level and checks that one's gain only when the level has docs
            stops = np.broadcast_to(gain <= 0, level_count.shape).copy()
            stops[:, :1] &= level_count[:, :1] > 0
        else:  # m_ndcg.c: levels without docs are skipped; a top gain <= 0 means no ideal at all
            stops = (level_count > 0) & (gain <= 0)
        keep = (level_count > 0) & (gain > 0) & ~(np.cumsum(stops, axis=1) > 0)
        if not stop_on_any_level and len(gain) and gain[0] <= 0:
            keep[:] = False
        groups.append((rows, np.where(keep, level_count, 0), gain))

    lengths = np.zeros(ctx.n, dtype=np.int64)
    for rows, repeats, _ in groups:
        lengths[rows] = repeats.sum(axis=1)
    offsets = offsets_from_counts(lengths)
    ideal = np.zeros(int(offsets[-1]))
    for rows, repeats, gain in groups:
        values = np.repeat(np.tile(gain, len(rows)), repeats.ravel())
        row_lengths = lengths[rows]
        within = np.arange(len(values)) - np.repeat(np.cumsum(row_lengths) - row_lengths, row_lengths)
        ideal[np.repeat(offsets[rows], row_lengths) + within] = values
    return ideal, offsets


def _values_at(ctx: MeasureContext, cumulative: np.ndarray, query: np.ndarray, position: np.ndarray) -> np.ndarray:
    """``cumulative`` (a running sum over each query's entries) at the last entry ranked <= position."""
    entries = len(ctx.seg)
    order = np.lexsort((np.concatenate((np.zeros(entries), np.ones(len(query)))),
                        np.concatenate((ctx.jr.ranks, position)),
                        np.concatenate((ctx.seg, query))))
    is_entry = order < entries
    last_entry = np.cumsum(is_entry) - 1
    at = np.empty(len(query), dtype=np.int64)
    at[order[~is_entry] - entries] = last_entry[~is_entry]
    inside = at >= ctx.jr.offsets[query]
    return np.where(inside, cumulative[np.maximum(at, 0)] if entries else 0.0, 0.0)


def _gains(ctx: MeasureContext, measure: Measure, **options) -> Gains:
    key = f"gains:{measure.param!r}:{options!r}"
    if key not in ctx._cache:
        ctx._cache[key] = Gains(ctx, measure.gains, **options)
    return ctx._cache[key]


def dcg(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    return segment_sum(_gains(ctx, measure).dcg_entries(), ctx.seg, ctx.n)


def ideal_dcg(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    gains = _gains(ctx, measure)
    return gains.ideal_at(gains.ideal_prefix(), np.arange(ctx.n), gains.ideal_length)


def ndcg(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_ndcg.c: DCG / ideal DCG with discount 1 / log2(rank + 1); 0 when the ideal DCG is 0."""
    if not measure.gains:
        return ctx.ndcg(None)
    value, ideal = dcg(ctx, measure), ideal_dcg(ctx, measure)
    return np.divide(value, ideal, out=np.zeros(ctx.n), where=ideal > 0)


def ndcg_rel(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_ndcg_rel.c: nDCG averaged over the ideal's positive-gain docs.

    Each retrieved doc with gain > 0 at rank r contributes DCG@r / IDCG@min(r, L) (L = length of the
    ideal list); each of the L docs not retrieved contributes DCG / IDCG at the end; the sum is / L.
    """
    gains = _gains(ctx, measure)
    cumulative = segment_cumsum(gains.dcg_entries(), ctx.jr.offsets, ctx.seg)
    prefix = gains.ideal_prefix()
    positive = gains.entry > 0
    query = ctx.seg[positive]
    ideal_at_rank = gains.ideal_at(prefix, query, np.floor(ctx.jr.ranks[positive]))
    with np.errstate(invalid="ignore", divide="ignore"):
        total = segment_sum(cumulative[positive] / ideal_at_rank, query, ctx.n)
        full_ideal = gains.ideal_at(prefix, np.arange(ctx.n), gains.ideal_length)
        missing = gains.ideal_length - np.bincount(query, minlength=ctx.n)
        total = total + missing * segment_sum(gains.dcg_entries(), ctx.seg, ctx.n) / full_ideal
        value = total / gains.ideal_length
    return np.where(total > 0, value, 0.0)


def rndcg(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_Rndcg.c: mean of nDCG@i over the ranks i where the ideal gain changes value.

    Those ranks are the ends of the ideal's gain levels (the last one at L, where the ideal runs out),
    plus num_ret when at least two docs follow the ideal; 0 for a query with no relevant doc.
    """
    gains = _gains(ctx, measure)
    ideal, offsets, length = gains.ideal, gains.ideal_offsets, gains.ideal_length
    position = np.arange(len(ideal)) - offsets[gains.ideal_seg]
    change = np.ones(len(ideal), dtype=bool)  # the value at position i differs from i + 1 (or the list ends)
    change[:-1] = ideal[:-1] != ideal[1:]
    change[offsets[1:][length > 0] - 1] = True
    event_query = np.concatenate((gains.ideal_seg[change], np.flatnonzero(ctx.jr.num_ret >= length + 2)))
    event_rank = np.concatenate((position[change] + 1.0, ctx.num_ret_f[ctx.jr.num_ret >= length + 2]))
    cumulative = segment_cumsum(gains.dcg_entries(), ctx.jr.offsets, ctx.seg)
    found = _values_at(ctx, cumulative, event_query, event_rank)
    ideal_there = gains.ideal_at(gains.ideal_prefix(), event_query, event_rank)
    usable = ideal_there > 0
    total = segment_sum(np.where(usable, found / np.where(usable, ideal_there, 1.0), 0.0), event_query, ctx.n)
    events = np.bincount(event_query[usable], minlength=ctx.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = total / events
    return np.where(ctx.num_rel_f > 0, value, 0.0)


def g_measure(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_G.c: sum of gain / log2(2 + cost(r) - gained(r)) over retrieved docs, / total ideal gain.

    cost(r) sums max(ideal gain, 1) over the first r ideal positions (1 past the ideal's end); gained(r)
    sums the gains of the retrieved docs ranked <= r. Both are added in trec_eval's order, bit for bit:
    a gain that makes 2 + cost - gained exactly 1 gives trec_eval's infinity, not a huge number.
    """
    gains = _gains(ctx, measure)
    rank = np.floor(ctx.jr.ranks).astype(np.int64)
    # cost at every entry: walk ranks 1, 2, ... per query, adding max(ideal gain, 1) (1 past the ideal)
    cost = np.zeros(len(rank))
    running = np.zeros(ctx.n)
    last_rank = np.zeros(ctx.n, dtype=np.int64)
    np.maximum.at(last_rank, ctx.seg, rank)
    active = np.flatnonzero(last_rank > 0)
    entry_start = ctx.jr.offsets[:-1].copy()
    for position in range(int(last_rank.max(initial=0))):
        active = active[last_rank[active] > position]
        inside = position < gains.ideal_length[active]
        ideal_gain = np.ones(len(active))
        ideal_gain[inside] = gains.ideal[gains.ideal_offsets[active[inside]] + position]
        running[active] += np.maximum(ideal_gain, 1.0)
        # record the cost at this rank for the entries ranked here (one per rank in a run file)
        pending = active[entry_start[active] < ctx.jr.offsets[active + 1]]
        pending = pending[rank[entry_start[pending]] == position + 1]
        while len(pending):
            cost[entry_start[pending]] = running[pending]
            entry_start[pending] += 1
            pending = pending[entry_start[pending] < ctx.jr.offsets[pending + 1]]
            pending = pending[rank[entry_start[pending]] == position + 1]
    gained = segment_running_sum(gains.entry, ctx.jr.offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(gains.entry != 0, gains.entry / np.log2(2.0 + cost - gained), 0.0)
    total_ideal = segment_sum(gains.ideal, gains.ideal_seg, ctx.n)
    return np.divide(segment_sum(terms, ctx.seg, ctx.n), total_ideal, out=np.zeros(ctx.n), where=total_ideal > 0)


def ndcg_p(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_ndcg_p.c: nDCG with the original discount (rank 1 undiscounted, then 1 / log2(rank)).

    0 unless a relevant doc (relevance level) was retrieved.
    """
    gains = _gains(ctx, measure, stop_on_any_level=True)
    discount = np.where(ctx.jr.ranks <= 1.0, 1.0, np.log2(np.maximum(ctx.jr.ranks, 1.0)))
    value = segment_sum(gains.entry / discount, ctx.seg, ctx.n)
    position = np.arange(len(gains.ideal)) - gains.ideal_offsets[gains.ideal_seg]
    ideal_discount = np.where(position == 0, 1.0, np.log2(np.maximum(position, 1) + 1.0))
    ideal = segment_sum(gains.ideal / ideal_discount, gains.ideal_seg, ctx.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ctx.get("num_rel_ret") > 0, value / ideal, 0.0)


def rbp(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    """m_rbp.c: (1 - p) * sum of gain * p^(rank-1), p from ``rbp.p=...`` (default 0.9).

    Gains are rescaled to [0, 1] with (g - min) / (max - min) over the query's gain table (levels 0 to
    its highest judged level, plus those given) when some gain lies outside [0, 1]. (trec_eval leaves
    min and max uninitialised before that loop; this is what the code intends.)
    """
    persistence = measure.named("p", 0.9)
    pairs = measure.gains
    gains = _gains(ctx, measure)
    jr = ctx.jr
    levels_of_query = num_levels(ctx)
    low, high = np.zeros(ctx.n), np.zeros(ctx.n)
    for levels_present in np.unique(levels_of_query):
        table = [pairs.get(level, float(level)) for level in range(int(levels_present))]
        table += [gain for level, gain in pairs.items() if level >= levels_present]
        rows = levels_of_query == levels_present
        low[rows], high[rows] = min(table, default=0.0), max(table, default=0.0)
    rescale = ((low < 0) | (high > 1))[ctx.seg]
    entry_low, entry_span = low[ctx.seg], (high - low)[ctx.seg]
    judged = jr.relevance >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(rescale & judged, (gains.entry - entry_low) / entry_span, gains.entry)
    weights = persistence ** (jr.ranks - 1.0)
    return (1.0 - persistence) * segment_sum(np.where(scaled != 0, scaled * weights, 0.0), ctx.seg, ctx.n)
