"""trec_eval measures computed from the ranks of the judged retrieved documents (no gain values).

Each function takes a :class:`MeasureContext` (and the measure's parameter) and returns one float64
value per query. The comments give the trec_eval source each follows (``m_<name>.c``); queries with
no relevant document score 0 unless stated. The interpolated and set measures, ``unj``, ``rbp_resid``
and ``relstring`` assume integer ranks (a run file); with fractional ranks they use the rank values as
given.
"""
from __future__ import annotations

import numpy as np

from evaluation.core._util import offsets_from_counts, segment_sum
from evaluation.core.macro_context import MeasureContext

#: trec_eval's floor for the geometric means (MIN_GEO_MEAN).
MIN_GEO_MEAN = 0.00001


def recall(ctx: MeasureContext, cutoff: int) -> np.ndarray:
    """m_recall.c: relevant retrieved in the top ``cutoff`` / R."""
    return ctx.divide_by_num_rel(ctx.hits_at(cutoff))


def relative_precision(ctx: MeasureContext, cutoff: int) -> np.ndarray:
    """m_rel_P.c: relevant retrieved in the top ``cutoff`` / min(cutoff, R)."""
    denominator = np.minimum(float(cutoff), ctx.num_rel_f)
    return np.divide(ctx.hits_at(cutoff), denominator, out=np.zeros(ctx.n), where=denominator > 0)


def _r_cutoffs(ctx: MeasureContext, level: float) -> np.ndarray:
    # trec_eval: (long) (level * num_rel + 0.9), a truncation toward zero
    return np.trunc(level * ctx.num_rel_f + 0.9)


def rprec_mult(ctx: MeasureContext, multiple: float) -> np.ndarray:
    """m_Rprec_mult.c: precision at rank (long)(multiple * R + 0.9); 0 when that rank is below 1."""
    cutoff = _r_cutoffs(ctx, multiple)
    return np.divide(ctx.hits_at(cutoff), cutoff, out=np.zeros(ctx.n), where=cutoff >= 1)


def _interpolated(ctx: MeasureContext) -> tuple[np.ndarray, np.ndarray]:
    """Interpolated precision at every relevant retrieved doc (max precision at it or below), CSR."""
    if "interpolated" not in ctx._cache:
        index = np.flatnonzero(ctx.is_rel)
        precision = ctx.get("rel_so_far")[index] / ctx.jr.ranks[index]
        query = ctx.seg[index]
        # Suffix maximum within each query, exactly: integer keys that grow with the precision inside a
        # query and jump between queries in the order the reversed scan meets them.
        order = np.lexsort((precision, -query))
        key = np.empty(len(order), dtype=np.int64)
        key[order] = np.arange(len(order))
        suffix_max = np.maximum.accumulate(key[::-1])[::-1] if len(key) else key
        rel_offsets = offsets_from_counts(np.bincount(query, minlength=ctx.n))
        ctx._cache["interpolated"] = precision[order][suffix_max] if len(key) else precision
        ctx._cache["interpolated_offsets"] = rel_offsets
    return ctx._cache["interpolated"], ctx._cache["interpolated_offsets"]


def iprec_at_recall(ctx: MeasureContext, level: float) -> np.ndarray:
    """m_iprec_at_recall.c: interpolated precision once (long)(level * R + 0.9) relevant docs are found.

    That count c is reached at the c-th relevant retrieved doc (c = 0 counts as the first); the value is
    the largest precision at or below it. 0 when fewer than c relevant docs were retrieved; with no
    relevant retrieved and c = 0, num_rel_ret / num_ret (NaN when nothing was retrieved, as in trec_eval).
    """
    interpolated, offsets = _interpolated(ctx)
    num_rel_ret = np.diff(offsets)
    cutoff = _r_cutoffs(ctx, level).astype(np.int64)
    position = np.maximum(cutoff, 1)
    reached = (position <= num_rel_ret)
    values = np.zeros(ctx.n)
    values[reached] = interpolated[offsets[:-1][reached] + position[reached] - 1]
    empty = (cutoff <= 0) & (num_rel_ret == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values[empty] = 0.0 / ctx.num_ret_f[empty]
    return values


def eleven_point_average(ctx: MeasureContext, levels: tuple[float, ...]) -> np.ndarray:
    """m_11pt_avg.c: mean of iprec_at_recall over the given recall levels (default 0, 0.1, ..., 1)."""
    return np.mean([iprec_at_recall(ctx, level) for level in sorted(levels)], axis=0)


def binary_g(ctx: MeasureContext) -> np.ndarray:
    """m_binG.c: sum over relevant retrieved of 1 / log2(2 + non-relevant above it), / R."""
    rank, found = ctx.jr.ranks[ctx.is_rel], ctx.get("rel_so_far")[ctx.is_rel]
    total = segment_sum(1.0 / np.log2(2.0 + rank - found), ctx.seg[ctx.is_rel], ctx.n)
    return ctx.divide_by_num_rel(total)


def yaap(ctx: MeasureContext) -> np.ndarray:
    """m_yaap.c: log((1 + S) / (1 + R - S)), S the sum of precisions at relevant retrieved docs."""
    total = ctx.get("sum_precision_at_rel")
    return np.log((1.0 + total) / (1.0 + ctx.num_rel_f - total))


def unjudged_at(ctx: MeasureContext, cutoff: int) -> np.ndarray:
    """m_unjudged.c (unj_N): unjudged docs (not in the qrels, or judged < 0) in the top N, / N."""
    judged = segment_sum(((ctx.jr.relevance >= 0) & (ctx.jr.ranks <= cutoff)).astype(np.float64), ctx.seg, ctx.n)
    return (np.minimum(ctx.num_ret_f, float(cutoff)) - judged) / cutoff


def rbp_residual(ctx: MeasureContext, persistence: float) -> np.ndarray:
    """m_rbp_resid.c: p^N + (1 - p) * sum of p^(rank-1) over unjudged retrieved docs; 0 if all judged.

    Written as 1 - (1 - p) * sum over the judged ones (the geometric series of all N ranks is
    (1 - p^N) / (1 - p)).
    """
    judged = ctx.jr.relevance >= 0
    judged_weight = segment_sum(np.where(judged, persistence ** (ctx.jr.ranks - 1.0), 0.0), ctx.seg, ctx.n)
    has_unjudged = ctx.num_ret_f > ctx.get("num_judged_ret")
    return np.where(has_unjudged, 1.0 - (1.0 - persistence) * judged_weight, 0.0)


def set_precision(ctx: MeasureContext) -> np.ndarray:
    """m_set_P.c: num_rel_ret / num_ret."""
    return np.divide(ctx.get("num_rel_ret"), ctx.num_ret_f, out=np.zeros(ctx.n), where=ctx.num_ret_f > 0)


def set_recall(ctx: MeasureContext) -> np.ndarray:
    """m_set_recall.c: num_rel_ret / R."""
    return ctx.divide_by_num_rel(ctx.get("num_rel_ret"))


def set_relative_precision(ctx: MeasureContext) -> np.ndarray:
    """m_set_rel_P.c: num_rel_ret / min(num_ret, R)."""
    denominator = np.minimum(ctx.num_ret_f, ctx.num_rel_f)
    return np.divide(ctx.get("num_rel_ret"), denominator, out=np.zeros(ctx.n), where=denominator > 0)


def set_map(ctx: MeasureContext) -> np.ndarray:
    """m_set_map.c: num_rel_ret^2 / (num_ret * R)."""
    denominator = ctx.num_ret_f * ctx.num_rel_f
    return np.divide(ctx.get("num_rel_ret") ** 2, denominator, out=np.zeros(ctx.n), where=denominator > 0)


def set_f(ctx: MeasureContext, beta: float) -> np.ndarray:
    """m_set_F.c: (b + 1) P R / (b P + R) on the retrieved set; 0 without a relevant retrieved doc."""
    found = ctx.get("num_rel_ret")
    with np.errstate(invalid="ignore", divide="ignore"):
        precision, recall_ = found / ctx.num_ret_f, found / ctx.num_rel_f
        value = (beta + 1.0) * precision * recall_ / (beta * precision + recall_)
    return np.where(found > 0, value, 0.0)


def utility(ctx: MeasureContext, coefficients: tuple[float, ...]) -> np.ndarray:
    """m_utility.c: a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret (-N collection size)."""
    a, b, c, d = coefficients
    found, retrieved, relevant = ctx.get("num_rel_ret"), ctx.num_ret_f, ctx.num_rel_f
    return (a * found + b * (retrieved - found) + c * (relevant - found)
            + d * (ctx.num_docs_in_collection + found - retrieved - relevant))


def num_nonrel_judged_ret(ctx: MeasureContext) -> np.ndarray:
    """m_num_nonrel_judged_ret.c: retrieved docs judged non-relevant (0 <= rel < level)."""
    return segment_sum(ctx.get("is_nonrel").astype(np.float64), ctx.seg, ctx.n)


def log_floor(values: np.ndarray) -> np.ndarray:
    """m_gm_map.c / m_gm_bpref.c: the per-query value of a geometric mean, log(max(v, 0.00001))."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def mean_rank(ctx: MeasureContext) -> np.ndarray:
    """kgpool's MR: rank of the first relevant retrieved doc.

    When relevant docs exist but none was retrieved, num_ret + 1 (the first relevant comes after the
    list at best); NaN when the query has no relevant doc (such queries are left out of the mean).
    """
    first = ctx.get("first_rel_rank")
    value = np.where(np.isfinite(first), first, ctx.num_ret_f + 1.0)
    return np.where(ctx.num_rel_f > 0, value, np.nan)


def relstring(ctx: MeasureContext, length: float) -> np.ndarray:
    """m_relstring.c: one character per retrieved doc in the top ``length`` (default 10).

    The judged relevance 0-9, ``>`` above 9, ``-`` for a doc not in the qrels, ``.`` for one judged < 0.
    """
    jr = ctx.jr
    shown = np.maximum(np.minimum(np.trunc(length), ctx.num_ret_f), 0).astype(np.int64)
    starts = offsets_from_counts(shown)
    text = np.full(int(starts[-1]), ord("-"), dtype=np.uint8)
    rank = np.floor(jr.ranks).astype(np.int64)
    inside = rank <= shown[ctx.seg]
    rel = jr.relevance[inside]
    code = np.where(rel > 9, ord(">"), np.where(rel >= 0, ord("0") + np.clip(rel, 0, 9), ord(".")))
    text[starts[ctx.seg[inside]] + rank[inside] - 1] = code
    raw = text.tobytes().decode("ascii")
    return np.array([raw[starts[q]:starts[q + 1]] for q in range(ctx.n)], dtype=object)
