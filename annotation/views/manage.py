"""Campaign management pages (role admin, superusers, staff): dashboard, members, source allow-list, trivial
filter, question templates, agreement, exports."""
from __future__ import annotations

import io
import math

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.forms import DomainsForm, FilterForm, MemberForm, TemplateForm
from annotation.lib.rules import RULES
from annotation.lib.templates import TemplateError
from annotation.selectors import web
from annotation.selectors.agreement import agreement, judgment_pairs
from annotation.selectors.filtering import filter_preview
from annotation.selectors.reference_labels import campaign_reference_labels
from annotation.selectors.gold import gold_summary, gold_warnings
from annotation.selectors.item_counts import item_counts
from annotation.selectors.templates import campaign_templates, generated_template, template_preview, template_problem
from annotation.services.campaigns import add_member, remove_member, set_allowed_domains
from annotation.services.errors import AnnotationError
from annotation.services.exports import FORMATS, export_judgments
from annotation.services.filtering import apply_filter, revert_auto_labels
from annotation.services.templates import reset_template, set_template
from annotation.views._common import managed_campaign, nav_context
from pooling.models import PoolEntry, Relation

EXPORT_FILES = {
    "labels": ("labels.tsv", "text/tab-separated-values"),
    "positives": ("positives.tsv", "text/tab-separated-values"),
    "questions": ("questions.tsv", "text/tab-separated-values"),
    "qrels": ("qrels.txt", "text/plain"),
    "jsonl": ("provenance.jsonl", "application/x-ndjson"),
    "csv": ("provenance.csv", "text/csv"),
    "labels-origin": ("labels-origin.tsv", "text/tab-separated-values"),
    "qrels-annotator": ("qrels.txt", "text/plain"),
    "readme": ("README.md", "text/markdown"),
}
PER_ANNOTATOR = ("qrels-annotator",)  # formats of one annotator's own answers (?annotator=USERNAME)
AGREEMENT_GROUPS = (("overall", "Overall"), ("pair", "Per annotator pair"), ("relation", "Per relation"),
                    ("category", "Per relation category"))


def _context(request, campaign, **extra) -> dict:
    context = nav_context(campaign, request.user)
    context.update(extra)
    return context


@login_required
def dashboard(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    figures = item_counts(campaign)  # every item count of the page, one query
    counts = web.status_counts(campaign, figures)
    members = web.member_rows(campaign)
    total = sum(n for _s, _l, n in counts) or 1
    bars = [(s, label, n, round(100 * n / total, 2)) for s, label, n in counts]
    return render(request, "annotation/manage/dashboard.html", _context(
        request, campaign, counts=bars, progress=web.progress(campaign, request.user, counts=figures),
        formats=[f for f in FORMATS if f not in PER_ANNOTATOR], per_annotator=[f for f in FORMATS if f in PER_ANNOTATOR],
        members=members, judges=[m for m in members if m["judged"]],
        gold=gold_summary(campaign, figures), gold_warnings=len(gold_warnings(campaign)), reused=figures.reused,
        flagged=figures.flagged,
    ))


@login_required
@require_http_methods(["GET", "POST"])
def members(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    form = MemberForm(request.POST or None)
    if request.method == "POST":
        if request.POST.get("remove"):
            user = get_object_or_404(get_user_model(), pk=request.POST.get("user"))
            remove_member(campaign, user, request.POST.get("role", ""))
            messages.info(request, f"Removed {user.username} as {request.POST.get('role')}.")
            return redirect("annotation:manage_members", name=campaign.name)
        if form.is_valid():
            user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
            if user is None:
                form.add_error("username", "no user with this name (create the account first)")
            else:
                try:
                    add_member(campaign, user, form.cleaned_data["role"])
                except AnnotationError as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(request, f"{user.username} is now {form.cleaned_data['role']}.")
                    return redirect("annotation:manage_members", name=campaign.name)
    return render(request, "annotation/manage/members.html", _context(
        request, campaign, form=form, members=web.member_rows(campaign),
    ), status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def domains(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    form = DomainsForm(request.POST or None, initial={"domains": "\n".join(campaign.allowed_domains)})
    if request.method == "POST" and form.is_valid():
        try:
            set_allowed_domains(campaign, form.cleaned_list())
        except AnnotationError as exc:
            form.add_error("domains", str(exc))
        else:
            messages.success(request, "Verified sources saved.")
            return redirect("annotation:manage_domains", name=campaign.name)
    return render(request, "annotation/manage/domains.html", _context(request, campaign, form=form),
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def judging_order(request: HttpRequest, name: str) -> HttpResponse:
    """The campaign's judging order and budget (issue 20), with how much judging is enough so far."""
    from annotation.forms import JudgingOrderForm
    from annotation.selectors.judging_progress import order_progress
    from annotation.services.judging_order import set_judging_order

    campaign = managed_campaign(name, request.user)
    form = JudgingOrderForm(request.POST or None,
                            initial={"order": campaign.judging_order, "budget": campaign.item_budget})
    if request.method == "POST" and form.is_valid():
        try:
            set_judging_order(campaign, form.cleaned_data["order"], budget=form.cleaned_data["budget"])
        except AnnotationError as exc:
            form.add_error("order", str(exc))
        else:
            messages.success(request, "Judging order saved; the queue follows it now.")
            return redirect("annotation:manage_order", name=campaign.name)
    return render(request, "annotation/manage/order.html",
                  _context(request, campaign, form=form, progress=order_progress(campaign)),
                  status=400 if form.errors else 200)


@login_required
@require_GET
def simulation(request: HttpRequest, name: str) -> HttpResponse:
    """The last ``simulate_judging`` of the campaign's sample: summary table and curves; ``?file=`` one of its files."""
    from django.http import FileResponse, Http404

    from evaluation.services.judging_simulation import SITE_FILES, default_out, load_summary

    campaign = managed_campaign(name, request.user)
    sample = campaign.pool.sample
    wanted = request.GET.get("file")
    if wanted:
        path = default_out(sample) / wanted
        if wanted not in SITE_FILES or not path.is_file():
            raise Http404("no such simulation file")
        return FileResponse(path.open("rb"), content_type=SITE_FILES[wanted], as_attachment=wanted.endswith(".csv"),
                            filename=wanted)
    summary = load_summary(sample)
    return render(request, "annotation/manage/simulation.html",
                  _context(request, campaign, summary=summary, sample=sample,
                           figures=[f for f in SITE_FILES if f.endswith(".png") and (default_out(sample) / f).is_file()]))


POSITIVES_SHOWN = 50


@login_required
def filtering(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    form = FilterForm(request.GET or None)
    report = None
    if form.is_bound and form.is_valid():
        kg = campaign.pool.sample.kg
        report = filter_preview(campaign.pool, form.cleaned_data["rules"], threshold=form.cleaned_data["threshold"],
                                type_options=form.type_options(), reference=campaign_reference_labels(kg))
    by_relation = []  # (relation key, [count per rule], any); Counters are flattened for the template
    if report:
        by_relation = [(key, [counter.get(rule, 0) for rule in report.rules], counter.get("any", 0))
                       for key, counter in sorted(report.by_relation.items(), key=lambda kv: (-kv[1]["any"], kv[0]))]
    counts = dict((s, n) for s, _l, n in web.status_counts(campaign))
    return render(request, "annotation/manage/filter.html", _context(
        request, campaign, form=form if form.is_bound else FilterForm(), report=report, rules=RULES,
        by_relation=by_relation, auto_negative=counts["auto_negative"],
        by_rule=sorted(report.by_rule.items()) if report else [],
        precision=list(report.precision.values()) if report else [],
        positives=_rejected_positives(report) if report else [],
        positives_total=len(report.precision["any"].positives) if report and "any" in report.precision else 0,
    ))


def _rejected_positives(report) -> list[dict]:
    """The labelled-Y entries the rules would reject (the first POSITIVES_SHOWN), with names."""
    record = report.precision.get("any")
    if record is None:
        return []
    shown = [pk for pk, _triple in record.positives[:POSITIVES_SHOWN]]
    entries = {e.pk: e for e in PoolEntry.objects.filter(pk__in=shown).select_related("head", "relation", "tail")}
    return [{"entry": entries[pk], "rules": ", ".join(report.fired.get(pk, ()))} for pk in shown if pk in entries]


@login_required
@require_POST
def filtering_apply(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    form = FilterForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose at least one rule, a threshold >= 1, a type support >= 1 and an overlap in [0, 1).")
        return redirect("annotation:manage_filter", name=campaign.name)
    report = apply_filter(campaign, form.cleaned_data["rules"], threshold=form.cleaned_data["threshold"],
                          type_options=form.type_options())
    messages.success(request, f"Labelled {report.applied} item(s) N automatically; {report.extended} automatic "
                              f"negative(s) now also carry another rule; {report.kept} already in human hands were kept.")
    return redirect("annotation:manage_filter", name=campaign.name)


@login_required
@require_POST
def filtering_revert(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    rule = request.POST.get("rule") or None
    if rule is not None and rule not in RULES:
        messages.error(request, f"unknown rule {rule!r}")
        return redirect("annotation:manage_filter", name=campaign.name)
    if rule is None and request.POST.get("confirm") != "all":
        messages.error(request, "Nothing reverted: tick the box to confirm that every automatic label goes back to people.")
        return redirect("annotation:manage_filter", name=campaign.name)
    result = revert_auto_labels(campaign, rules=[rule] if rule else None)
    messages.success(request, f"{result.sent_back} automatic label(s) reverted; those items are back in the queue."
                              + (f" {result.still_covered} stay N: another applied rule still covers them."
                                 if result.still_covered else ""))
    return redirect("annotation:manage_filter", name=campaign.name)


@login_required
@require_http_methods(["GET", "POST"])
def templates(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    kg = campaign.pool.sample.kg
    errors: dict[int, str] = {}
    posted: dict[int, str] = {}
    if request.method == "POST":
        form = TemplateForm(request.POST)
        if form.is_valid():
            relation = get_object_or_404(Relation, pk=form.cleaned_data["relation"], kg=kg)
            if request.POST.get("reset"):
                reset_template(relation, campaign=campaign)
                messages.info(request, f"Template of {relation.key} reset to the knowledge graph's default.")
                return redirect("annotation:manage_templates", name=campaign.name)
            try:
                set_template(relation, form.cleaned_data["text"], campaign=campaign, user=request.user)
            except AnnotationError as exc:
                errors[relation.pk] = str(exc)
                posted[relation.pk] = form.cleaned_data["text"]
            else:
                messages.success(request, f"Template of {relation.key} saved.")
                return redirect("annotation:manage_templates", name=campaign.name)
        else:
            messages.error(request, "The template text is required.")
    texts = campaign_templates(campaign)
    counts = web.relation_item_counts(campaign)
    overridden = set(campaign.templates.values_list("relation_id", flat=True))
    rows = [
        {"relation": r, "text": posted.get(r.pk, texts.get(r.pk, "")), "items": counts.get(r.pk, 0),
         "override": r.pk in overridden, "error": errors.get(r.pk, "") or _unusable(r, texts.get(r.pk, ""))}
        for r in Relation.objects.filter(kg=kg).order_by("index")
    ]
    rows.sort(key=lambda row: (-row["items"], row["relation"].index))
    return render(request, "annotation/manage/templates.html", _context(request, campaign, rows=rows),
                  status=400 if errors else 200)


def _unusable(relation: Relation, text: str) -> str:
    """The error shown on a stored template that cannot be used (saved before the strict check)."""
    problem = template_problem(text)
    if not problem:
        return ""
    return (f"The saved template cannot be used: {problem}. Judges see the generated default "
            f"“{generated_template(relation)}” until it is fixed.")


@login_required
@require_GET
def template_preview_json(request: HttpRequest, name: str) -> JsonResponse:
    campaign = managed_campaign(name, request.user)
    try:
        relation = Relation.objects.get(pk=int(request.GET.get("relation", "")), kg=campaign.pool.sample.kg)
    except (ValueError, Relation.DoesNotExist):
        return JsonResponse({"error": "unknown relation"}, status=404)
    try:
        rows = template_preview(relation, request.GET.get("text"), campaign=campaign)
    except TemplateError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"relation": relation.key, "rows": [r.__dict__ for r in rows]})


def _number(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 3)


@login_required
def agreement_page(request: HttpRequest, name: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    usernames = {m["user"].pk: m["user"].username for m in web.member_rows(campaign)}
    pairs = judgment_pairs(campaign)  # read once for every grouping
    tables = []
    for by, title in AGREEMENT_GROUPS:
        rows = []
        for row in agreement(campaign, by, pairs=pairs):
            group = row.group
            if by == "pair":
                group = " – ".join(usernames.get(int(u), f"user {u}") for u in row.group.split("-"))
            values = [_number(v) for v in (row.percent, row.kappa, row.ac1, row.alpha)]
            bars = [max(0.0, min(1.0, v)) * 100 if v is not None else 0.0 for v in values]
            rows.append({"group": group, "items": row.items, "cant_tell": row.cant_tell, "values": values,
                         "bars": bars})
        tables.append({"by": by, "title": title, "rows": rows})
    return render(request, "annotation/manage/agreement.html", _context(
        request, campaign, tables=tables, measures=("% agreement", "Cohen's κ", "Gwet's AC1", "Krippendorff's α"),
    ))


@login_required
@require_GET
def export(request: HttpRequest, name: str, fmt: str) -> HttpResponse:
    campaign = managed_campaign(name, request.user)
    if fmt not in FORMATS:
        return HttpResponse(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}", status=404,
                            content_type="text/plain")
    annotator = None
    if request.GET.get("annotator"):
        annotator = get_user_model().objects.filter(username=request.GET["annotator"], campaign_memberships__campaign=campaign).first()
        if annotator is None:
            return HttpResponse("no such member of this campaign", status=404, content_type="text/plain")
    out = io.StringIO()
    try:
        export_judgments(campaign, fmt, out, **({"annotator": annotator} if annotator is not None else {}))
    except ValueError as exc:  # e.g. a per-annotator format without ?annotator=USERNAME
        return HttpResponse(f"{exc} (add ?annotator=USERNAME)", status=400, content_type="text/plain")
    filename, content_type = EXPORT_FILES.get(fmt, (f"{fmt}.tsv", "text/tab-separated-values"))
    response = HttpResponse(out.getvalue(), content_type=f"{content_type}; charset=utf-8")
    suffix = f"-{annotator.username}" if annotator is not None else ""
    response["Content-Disposition"] = f'attachment; filename="{campaign.name}{suffix}-{filename}"'
    return response
