"""The campaign quality page (role admin / staff, issue 8): gold-check accuracy per annotator with Wilson
intervals, rushed judgments, consistency flags, agreement with bootstrap intervals by group; buttons to top up
the gold checks and to re-check consistency. Thin: the numbers come from the selectors."""
from __future__ import annotations

import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.selectors.agreement import judgment_pairs
from annotation.selectors.gold import gold_accuracy_by_annotator, gold_summary, gold_warnings
from annotation.selectors.item_counts import item_counts
from annotation.selectors.quality import CI_GROUPINGS, agreement_with_ci, flag_counts, rushed_report
from annotation.services.consistency import check_campaign
from annotation.services.errors import AnnotationError
from annotation.services.gold import add_gold_items, gold_target
from annotation.views._common import managed_campaign, nav_context

GROUP_TITLES = {"overall": "Overall", "relation": "By relation", "category": "By relation category",
                "depth": "By pool depth", "system": "By system (an item counts for each system that pooled it)",
                "domain": "By source domain (an item counts for each domain its judgments cite)"}
MEASURES = (("percent", "% agreement"), ("kappa", "Cohen's κ"), ("ac1", "Gwet's AC1"), ("alpha", "Krippendorff's α"))
DEFAULT_SAMPLES = 1000


def _num(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _interval(iv) -> dict:
    return {"estimate": _num(iv.estimate), "low": _num(iv.low), "high": _num(iv.high)}


def ci_figure(rows: list[dict], *, width: int = 680, row_height: int = 30, label_width: int = 170) -> dict:
    """Positions of an inline SVG: AC1 with its bootstrap interval per group (dot and whisker), axis [lo, 1]."""
    lows = [r["ac1"]["low"] for r in rows if r["ac1"]["low"] is not None]
    lo = min([0.0, *lows])
    lo = math.floor(lo * 5) / 5  # a tick at a multiple of 0.2
    plot = width - label_width - 20

    def x(v: float) -> float:
        return round(label_width + (v - lo) / (1.0 - lo) * plot, 1)

    top = 30
    bars = []
    for n, row in enumerate(rows):
        y = top + n * row_height + row_height / 2
        ac1 = row["ac1"]
        bars.append({
            "group": row["group"], "items": row["items"], "y": y, "text_y": y + 4,
            "x": None if ac1["estimate"] is None else x(ac1["estimate"]),
            "x1": None if ac1["low"] is None else x(ac1["low"]),
            "x2": None if ac1["high"] is None else x(ac1["high"]),
            "label": "—" if ac1["estimate"] is None else f"{ac1['estimate']:.2f}", "label_y": y - 8,
        })
    height = top + len(rows) * row_height + 10
    ticks = []
    value = lo
    while value <= 1.0 + 1e-9:
        ticks.append({"x": x(value), "label": f"{value:.1f}"})
        value = round(value + 0.2, 10)
    return {"width": width, "height": height, "bars": bars, "ticks": ticks, "top": top - 6, "bottom": height - 8,
            "label_width": label_width}


WILSON_WIDTH = 160


def _wilson_bar(iv) -> dict | None:
    """x positions (px, [0, 1] over WILSON_WIDTH) of an accuracy interval's bar and estimate's dot."""
    if _num(iv.estimate) is None:
        return None
    return {"x": round(iv.low * WILSON_WIDTH, 1), "w": round(max(1.0, (iv.high - iv.low) * WILSON_WIDTH), 1),
            "cx": round(iv.estimate * WILSON_WIDTH, 1)}


@login_required
def quality_page(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    try:
        samples = max(100, min(5000, int(request.GET.get("samples", DEFAULT_SAMPLES))))
    except ValueError:
        samples = DEFAULT_SAMPLES
    accuracy = gold_accuracy_by_annotator(campaign)
    warned = {row.user_id for row in gold_warnings(campaign, accuracy=accuracy)}
    gold_rows = [
        {"username": row.username, "correct": row.correct, "total": row.total, "missed_yes": row.missed_yes,
         "missed_no": row.missed_no, "accuracy": _interval(row.accuracy), "warn": row.user_id in warned,
         "clear": row.user_id in warned and row.accuracy.high < campaign.gold_threshold,
         "bar": _wilson_bar(row.accuracy)}
        for row in accuracy
    ]
    figures = item_counts(campaign)  # the page's item counts, one query
    human, want_yes, want_no = gold_target(campaign, figures)
    pairs = judgment_pairs(campaign)  # read once for the six groupings
    tables = []
    for by in CI_GROUPINGS:
        rows = [
            {"group": row.group, "items": row.items, "cant_tell": row.cant_tell,
             **{key: _interval(getattr(row, key)) for key, _title in MEASURES}}
            for row in agreement_with_ci(campaign, by, samples=samples, pairs=pairs)
        ]
        tables.append({"by": by, "title": GROUP_TITLES[by], "rows": rows})
    by_category = next(t["rows"] for t in tables if t["by"] == "category")
    rushed = rushed_report(campaign)
    context = nav_context(campaign, request.user)
    context.update(
        section="quality", gold_rows=gold_rows, gold=gold_summary(campaign, figures), gold_want=want_yes + want_no,
        human_items=human, warnings=[r for r in gold_rows if r["warn"]], rushed=rushed,
        rushed_judgments=rushed.judgments[:50], flags=flag_counts(campaign), tables=tables, measures=MEASURES,
        figure=ci_figure(by_category) if by_category else None,
        threshold_x=round(campaign.gold_threshold * WILSON_WIDTH, 1), samples=samples, reused=figures.reused,
    )
    return render(request, "annotation/manage/quality.html", context)


@login_required
@require_POST
def add_gold(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    try:
        seed = int(request.POST.get("seed") or 0)
        report = add_gold_items(campaign, seed=seed)
    except ValueError:
        messages.error(request, "The seed must be a whole number.")
    except AnnotationError as exc:
        messages.error(request, str(exc))
    else:
        text = (f"Gold checks: {report.added} added, {report.removed} removed; now {report.yes} Y + {report.no} N "
                f"for {report.human_items} items to judge (target {report.target}).")
        if report.shortfall:
            text += f" {report.shortfall} N check(s) could not be drawn (no ruled-out candidate found)."
        messages.success(request, text)
    return redirect("annotation:manage_quality", name=campaign.name)


@login_required
@require_POST
def recheck(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    report = check_campaign(campaign)
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(report.by_kind.items())) or "none"
    messages.success(request, f"Re-checked {report.judgments} judgment(s): {len(report.flagged)} flagged item(s) "
                              f"({kinds}), {report.new_flags} new flag(s).")
    return redirect("annotation:manage_quality", name=campaign.name)
