"""Question-wise (macro, IR-style) metrics with exact trec_eval 10 semantics, from arrays.

Representation
--------------
A :class:`JudgedRanking` (:mod:`evaluation.core.judged_ranking`, re-exported here) keeps, for every evaluated query, only the *judged documents that were
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

Measures: every trec_eval 10 measure of ``-m all_trec`` plus dcg, ideal_dcg, yaap, ndcg_p and kgpool's
MR, named and parameterised as trec_eval prints them (:mod:`measure_names`); this module holds the
classic ones, :mod:`macro_rank` the other rank-based ones, :mod:`macro_gain` those with gain values.
trec_eval's options (-c, -M, -J ...) and whole-run values: :mod:`evaluation.core.trec_eval`.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

import numpy as np

from evaluation.core import macro_gain as gain_measures
from evaluation.core import macro_rank as rank_measures
from evaluation.core import measure_names as names
from evaluation.core._util import segment_sum
from evaluation.core.judged_ranking import JudgedRanking
from evaluation.core.macro_context import MeasureContext
from evaluation.core.measure_names import Measure, UnknownMeasureError

__all__ = ["JudgedRanking", "SUMMED_MEASURES", "UnknownMeasureError", "evaluate", "expand_measures",
           "mean_over_queries", "parse_measure"]

#: Measures whose "all" value trec_eval reports as a sum over queries, not a mean.
SUMMED_MEASURES: frozenset[str] = names.SUMMED
#: trec_eval's infAP smoothing constant.
INFAP_EPSILON = 0.00001


# ---------------------------------------------------------------------- measure names
def parse_measure(name: str) -> tuple[str, int | None]:
    """'P_10' -> ('P', 10); 'map' -> ('map', None). Raises UnknownMeasureError (cut-off measures only)."""
    measure = names.from_name(name)
    return measure.base, measure.param if measure.kind == "cut" else None


def expand_measures(requested: Iterable[str]) -> list[str]:
    """Printed names for trec_eval-style requests ('P', 'P.5,10', 'ndcg_cut_20', 'all_trec'), in trec_eval's
    order; ``runid`` and ``num_q`` (whole-run values) are left out. Raises UnknownMeasureError."""
    return [m.name for m in names.request(requested) if m.base not in ("runid", "num_q")]


# ---------------------------------------------------------------------- evaluation
def _with_param(function: Callable) -> Callable[[MeasureContext, Measure], np.ndarray]:
    return lambda ctx, measure: function(ctx, measure.param)


def _first(function: Callable) -> Callable[[MeasureContext, Measure], np.ndarray]:
    return lambda ctx, measure: function(ctx, measure.param[0])


def _map(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    return ctx.divide_by_num_rel(ctx.get("sum_precision_at_rel"))


def _map_cut(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    precision = np.where(ctx.jr.ranks <= measure.param, ctx.get("precision_at_rel"), 0.0)
    return ctx.divide_by_num_rel(segment_sum(precision, ctx.seg, ctx.n))


def _precision(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    return ctx.hits_at(measure.param) / measure.param


def _rprec(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    return ctx.divide_by_num_rel(ctx.hits_at(ctx.num_rel_f))


def _bpref(ctx: MeasureContext, measure: Measure | None = None) -> np.ndarray:
    jr = ctx.jr
    nonrel_before = ctx.get("nonrel_so_far")[ctx.is_rel].astype(np.float64)
    rel_seg = ctx.seg[ctx.is_rel]
    num_rel = ctx.num_rel_f[rel_seg]
    denominator = np.minimum(jr.num_nonrel[rel_seg], num_rel)
    penalty = np.divide(np.minimum(nonrel_before, num_rel), denominator,
                        out=np.zeros_like(num_rel), where=nonrel_before > 0)
    return ctx.divide_by_num_rel(segment_sum(1.0 - penalty, rel_seg, ctx.n))


def _infap(ctx: MeasureContext, measure: Measure) -> np.ndarray:
    jr = ctx.jr
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


_MEASURES: dict[str, Callable[[MeasureContext, Measure], np.ndarray]] = {
    "num_ret": lambda ctx, m: ctx.num_ret_f.copy(),
    "num_rel": lambda ctx, m: ctx.num_rel_f.copy(),
    "num_rel_ret": lambda ctx, m: ctx.get("num_rel_ret").copy(),
    "map": _map,
    "gm_map": lambda ctx, m: rank_measures.log_floor(_map(ctx, m)),
    "Rprec": _rprec,
    "bpref": _bpref,
    "recip_rank": lambda ctx, m: 1.0 / ctx.get("first_rel_rank"),
    "iprec_at_recall": _with_param(rank_measures.iprec_at_recall),
    "P": _precision,
    "relstring": _first(rank_measures.relstring),
    "recall": _with_param(rank_measures.recall),
    "infAP": _infap,
    "gm_bpref": lambda ctx, m: rank_measures.log_floor(_bpref(ctx)),
    "Rprec_mult": _with_param(rank_measures.rprec_mult),
    "utility": _with_param(rank_measures.utility),
    "11pt_avg": _with_param(rank_measures.eleven_point_average),
    "binG": lambda ctx, m: rank_measures.binary_g(ctx),
    "G": gain_measures.g_measure,
    "dcg": gain_measures.dcg,
    "ideal_dcg": gain_measures.ideal_dcg,
    "ndcg": gain_measures.ndcg,
    "ndcg_rel": gain_measures.ndcg_rel,
    "Rndcg": gain_measures.rndcg,
    "ndcg_cut": lambda ctx, m: ctx.ndcg(m.param),
    "map_cut": _map_cut,
    "relative_P": _with_param(rank_measures.relative_precision),
    "success": lambda ctx, m: (ctx.get("first_rel_rank") <= m.param).astype(np.float64),
    "set_P": lambda ctx, m: rank_measures.set_precision(ctx),
    "set_relative_P": lambda ctx, m: rank_measures.set_relative_precision(ctx),
    "set_recall": lambda ctx, m: rank_measures.set_recall(ctx),
    "set_map": lambda ctx, m: rank_measures.set_map(ctx),
    "set_F": _first(rank_measures.set_f),
    "num_nonrel_judged_ret": lambda ctx, m: rank_measures.num_nonrel_judged_ret(ctx),
    "yaap": lambda ctx, m: rank_measures.yaap(ctx),
    "rbp": gain_measures.rbp,
    "rbp_resid": lambda ctx, m: rank_measures.rbp_residual(ctx, m.named("p", 0.9)),
    "unj": _with_param(rank_measures.unjudged_at),
    "ndcg_p": gain_measures.ndcg_p,
    "MR": lambda ctx, m: rank_measures.mean_rank(ctx),
}


def evaluate(judged_ranking: JudgedRanking, measures: Iterable[str | Measure], *,
             num_docs_in_collection: int = 0) -> dict[str, np.ndarray]:
    """Per-query values (arrays of length num_queries, in query order) of each measure.

    Measures are :class:`~evaluation.core.measure_names.Measure` objects or the names trec_eval prints:
    map, P_10, ndcg_cut_20, iprec_at_recall_0.10, set_F_0.5, ndcg_1=3,2=9, rbp_p=0.8, ... (see
    :mod:`evaluation.core.measure_names`). Values are float64, except ``relstring`` (str). ``gm_map`` and
    ``gm_bpref`` give trec_eval's per-query log(max(value, 0.00001)); :func:`mean_over_queries` turns them
    into the geometric mean. ``num_docs_in_collection`` is trec_eval's ``-N`` (used by ``utility``).
    """
    ctx = MeasureContext(judged_ranking, num_docs_in_collection)
    values: dict[str, np.ndarray] = {}
    for measure in measures:
        measure = names.from_name(measure) if isinstance(measure, str) else measure
        if measure.base not in _MEASURES:
            raise UnknownMeasureError(f"{measure.name!r} is a whole-run value, not a per-query measure")
        values[measure.name] = _MEASURES[measure.base](ctx, measure)
    return values


def mean_over_queries(
    per_query: Mapping[str, np.ndarray],
    judged_ranking: JudgedRanking,
    *,
    only_with_relevant: bool = False,
) -> dict[str, float]:
    """trec_eval's "all" row: the mean over evaluated queries.

    Sums for num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret; the geometric mean (exp of the
    mean log) for gm_map and gm_bpref; MR over the queries with a relevant document; relstring has none.
    ``only_with_relevant`` averages over the queries with at least one relevant document only.
    """
    with_relevant = judged_ranking.num_rel > 0
    mask = with_relevant if only_with_relevant else np.ones(judged_ranking.num_queries, bool)
    summary: dict[str, float] = {}
    for name, values in per_query.items():
        base = names.from_name(name).base
        selected = values[mask & with_relevant] if base == "MR" else values[mask]
        if base == "relstring":
            continue
        if base in SUMMED_MEASURES:
            summary[name] = float(selected.sum())
        elif not len(selected):
            summary[name] = 0.0
        elif base in ("gm_map", "gm_bpref"):
            summary[name] = float(np.exp(selected.mean()))
        else:
            summary[name] = float(selected.mean())
    return summary
