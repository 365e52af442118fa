"""Evaluation pages: list of runs, start a run (staff), report with tables and figures, downloads.

Torch-free: reports read the stored summary.json; computing happens in evaluation.tasks (Celery).
"""
from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evaluation.core.rank_family import DEFAULT_HITS, added_names
from evaluation.core.summary import MIN_SYSTEMS_FOR_TAU, best_rows, metric_direction, ranking_summary
from evaluation.figures import FIGURE_CAPTIONS
from evaluation.models import EvaluationRun
from evaluation.services.result import PROTOCOL_NAMES, PROTOCOLS
from evaluation.selectors.runs import (
    CONTENT_TYPES, run_completion, run_file, run_progress, run_report, runs_visible_to, shown_error,
)
from pooling.models import Pool, Sample

MAIN_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The runs the user may open; ``?campaign=NAME`` (the campaign pages link here): that campaign's only."""
    runs = runs_visible_to(request.user)
    campaign = request.GET.get("campaign", "")
    if campaign:
        runs = runs.filter(campaign__name=campaign)
    return render(request, "evaluation/runs.html", {"runs": runs[:200], "campaign": campaign})


def _campaigns():
    from annotation.models import Campaign

    return Campaign.objects.select_related("pool__sample").order_by("name")


class NewRunForm(forms.Form):
    sample = forms.ModelChoiceField(queryset=Sample.objects.select_related("kg").order_by("kg__name", "name"))
    campaign = forms.ModelChoiceField(queryset=_campaigns(), required=False,
                                      help_text="Judging campaign whose final labels complete the sample "
                                                "(gold checks never count; depths from its pool)")
    labels_file = forms.CharField(required=False, max_length=1000,
                                  help_text="Or: server path of a judgments file, one judged triple a line: "
                                            "head, relation, tail and Y or N, separated by tabs "
                                            "(both blank: sparse only)")
    pool = forms.ModelChoiceField(queryset=Pool.objects.select_related("sample").order_by("name"), required=False,
                                  help_text="Pool giving the depths (blank: the sample's only finished pool)")
    policy = forms.ChoiceField(choices=[(p, p) for p in ("realistic", "optimistic", "pessimistic")])
    dp_test = forms.ChoiceField(label="Discriminative power", required=False, initial="t",
                                choices=[("t", "paired t-test"), ("bootstrap", "Sakai's paired bootstrap")])
    open_world = forms.BooleanField(label="Open-world simulation", required=False, initial=True)
    protocols = forms.MultipleChoiceField(
        label="Also evaluate", required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(p, PROTOCOL_NAMES[p]) for p in PROTOCOLS],
        help_text="besides link prediction (always): on the sparse and on the completed labels")
    negatives = forms.MultipleChoiceField(
        label="Classification negatives", required=False, widget=forms.CheckboxSelectMultiple,
        initial=["corrupted-typed"], choices=[
            ("judged", "judged negatives of the campaign / labels file"),
            ("dataset", "the dataset's hard negatives (valid_negatives.txt, test_negatives.txt)"),
            ("corrupted-typed", "corrupted, type-consistent"), ("corrupted-random", "corrupted at random")],
        help_text="each source is reported on its own")
    negatives_dir = forms.CharField(label="Hard negatives folder", required=False, max_length=1000,
                                    help_text="server folder with the dataset's negatives files (blank: the KG's "
                                              "source folder)")
    negatives_seed = forms.IntegerField(label="Corruption seed", initial=0, min_value=0, max_value=2**31 - 1,
                                        required=False, help_text="blank: 0")
    pair_k = forms.IntegerField(label="Pair ranking K", initial=100, min_value=1, max_value=100_000, required=False,
                                help_text="MAP@K / P@K cut-off (blank: 100)")

    def protocol_options(self) -> dict:
        data = self.cleaned_data
        return {"protocols": tuple(data.get("protocols") or ()), "negatives": tuple(data.get("negatives") or ()),
                "negatives_dir": data.get("negatives_dir") or "", "negatives_seed": data.get("negatives_seed") or 0,
                "pair_k": data.get("pair_k") or 100}

    def clean(self):
        data = super().clean()
        if data.get("sample") is not None and not self.has_error("pair_k"):
            from evaluation.services.errors import EvaluationError
            from evaluation.services.protocols import check_protocol_sources
            from evaluation.services.result import EvaluationOptions

            try:
                check_protocol_sources(EvaluationOptions(**self.protocol_options()), data["sample"],
                                       bool(data.get("labels_file") or data.get("campaign")))
            except EvaluationError as exc:
                self.add_error("negatives", str(exc))
        labels = data.get("labels_file")
        if labels and not Path(labels).is_file():
            kind = "a folder" if Path(labels).is_dir() else "not a regular file" if Path(labels).exists() else None
            self.add_error("labels_file", f"{labels} is {kind}: give a judgments file" if kind else
                           "no such file on the server")
        campaign, pool, sample = data.get("campaign"), data.get("pool"), data.get("sample")
        if labels and campaign is not None:
            self.add_error("campaign", "give a campaign or a labels file, not both")
        if campaign is not None and sample is not None and campaign.pool.sample_id != sample.pk:
            self.add_error("campaign", f"this campaign judges a pool of sample {campaign.pool.sample.name}")
        if pool is not None and sample is not None and pool.sample_id != sample.pk:
            self.add_error("pool", "this pool belongs to another sample")
        return data


@staff_member_required
@require_http_methods(["GET", "POST"])
def new_run(request: HttpRequest) -> HttpResponse:
    """Create the run and queue it (``start_evaluation``: Celery, once the transaction commits), then redirect to
    its page, which shows the progress until it is done. With workers (CELERY_BROKER_URL) this returns at once.
    Embedded (tasks eager, in-process) the tasks run at the commit, inside this request: the redirect comes when
    the run is done, and the form's script says so while the browser waits (kgpool runs no background threads)."""
    from django.db import transaction

    from evaluation.services.evaluate import EvaluationOptions, create_run, start_evaluation
    from evaluation.services.ranks import EvaluationError

    form = NewRunForm(request.POST or None, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                run = create_run(data["sample"], labels_file=data["labels_file"], pool=data["pool"],
                                 campaign=data.get("campaign"),
                                 options=EvaluationOptions(policy=data["policy"], dp_test=data.get("dp_test") or "t",
                                                           open_world=bool(data.get("open_world")),
                                                           **form.protocol_options()))
                start_evaluation(run)
        except EvaluationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("evaluation:report", run_id=run.pk)
    embedded = bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))
    return render(request, "evaluation/new.html", {"form": form, "embedded": embedded})


def _pivot(records: list[dict], metric: str, systems: list[str]) -> dict:
    rows: dict[str, dict[str, float]] = {}
    for row in records:
        if row["metric"] == metric:
            rows.setdefault(f"{row['label_set']} {row['group']}", {})[row["system"]] = row["value"]
    return {"columns": systems, "rows": [(k, [v.get(s) for s in systems]) for k, v in rows.items()]}


def _relations_table(records: list[dict], systems: list[str], metric: str = "micro_MRR") -> dict:
    """Per relation (rows), micro MRR per label set x system (columns), with the ranking counts."""
    sets = list(dict.fromkeys(r["label_set"] for r in records))
    columns = [f"{s} {name}" for s in sets for name in systems]
    rows: dict[str, dict[str, float]] = {}
    for r in records:
        rows.setdefault(r["relation"], {})[f"{r['label_set']} {r['system']}"] = r.get(metric)
    return {"columns": columns, "rows": [(k, [v.get(c) for c in columns]) for k, v in sorted(rows.items())]}


def _table(records: list[dict], index: str, columns: list[str] | None = None) -> dict:
    """{'columns': [...], 'rows': [(label, [values])]} for the template."""
    if not records:
        return {"columns": [], "rows": []}
    columns = columns or [c for c in records[0] if c != index]
    columns = [c for c in columns if c in records[0]]
    return {"columns": columns, "rows": [(r[index], [r.get(c) for c in columns]) for r in records]}


def _with_best(table: dict, directions: list[int] | None = None) -> dict:
    """The table with each value as (value, best in its column); ``directions`` per column (+1 higher is better,
    -1 lower, 0 none; default: from the column's metric name)."""
    directions = directions if directions is not None else [metric_direction(c) for c in table["columns"]]
    best = best_rows([values for _label, values in table["rows"]], directions)
    rows = [(label, [(v, index in best[column]) for column, v in enumerate(values)])
            for index, (label, values) in enumerate(table["rows"])]
    return {**table, "rows": rows}


def _plain(table: dict) -> dict:
    """A table with nothing to highlight (rows are not systems, or its columns are taus / counts)."""
    return _with_best(table, [0] * len(table["columns"]))


def _protocol_context(data: dict | None) -> dict | None:
    """The protocols' tables (issue 16): the best system of each pair-ranking / property column marked."""
    from evaluation.services.protocol_report import protocol_tables

    tables = protocol_tables(data)
    if tables is None:
        return None
    tables["classification"] = _plain(tables["classification"])  # rows mix negatives sources: no single best
    for key in ("pair_ranking", "property"):
        directions = [-1 if column.startswith("MR ") else 0 if column.startswith(("negatives", "questions",
                                                                                  "relations")) else 1
                      for column in tables[key]["columns"]]
        tables[key] = _with_best(tables[key], directions)
    tables["kendall"] = _plain(tables["kendall"])
    return tables


@login_required
def report(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(runs_visible_to(request.user), pk=run_id)
    data = run_report(run)
    context = {"run": run, "error": shown_error(run, request.user), "data": data, "downloads": [], "figures": [],
               "completion": run_completion(run)}
    if data is not None:
        metrics = data.get("metrics", [])
        hits = tuple((data.get("options") or {}).get("hits", DEFAULT_HITS))
        family = [c for c in (f"micro_{n}" for n in added_names(hits)) if c in metrics]
        main = [c for c in metrics if c not in family]
        main_sets = [(name, rows) for name, rows in data["tables"].items() if name in ("sparse", "completed")]
        summary_metric = next((m for m in MAIN_METRICS if m in metrics), None)
        context["summary"] = ranking_summary(data["tables"], summary_metric) if summary_metric else None
        context["min_systems_for_tau"] = MIN_SYSTEMS_FOR_TAU
        context["tables"] = [(name, _with_best(_table(rows, "system", main))) for name, rows in main_sets]
        context["family_tables"] = [(name, _with_best(_table(rows, "system", family)))
                                    for name, rows in main_sets if family]
        context["tie_policy"] = (data.get("options") or {}).get("policy", "realistic")
        context["kendall"] = _plain(_table(data.get("kendall", []), "metric"))
        depth_columns = [m for m in MAIN_METRICS if m in metrics]
        context["depth_curve"] = _plain(_table(data.get("depth_curve", []), "depth", depth_columns))
        probe = {"alpha": data.get("probe_alpha", {}), "beta": data.get("probe_beta", {})}
        for grid, tables in probe.items():  # rows are systems, columns PROBE at one alpha / beta: higher is better
            context[f"probe_{grid}"] = [(n, _with_best(table, [1] * len(table["columns"])))
                                        for n, table in ((n, _table(rows, "system")) for n, rows in tables.items())]
        context["auc"] = data.get("discriminative_auc", [])
        breakdown: dict[tuple[str, str], dict[str, float]] = {}
        for row in data.get("breakdown", []):
            if row["metric"] == "micro_MRR":
                breakdown.setdefault((row["label_set"], row["group"]), {})[row["system"]] = row["value"]
        systems = data.get("systems", [])
        context["breakdown"] = {"columns": systems,
                                "rows": [(f"{k[0]} {k[1]}", [v.get(s) for s in systems]) for k, v in breakdown.items()]}
        context["breakdown_macro"] = _pivot(data.get("breakdown", []), "macro_MRR", systems)
        context["relations"] = _relations_table(data.get("relations", []), systems)
        averages: dict[str, dict[str, float]] = {}
        for row in data.get("averages", []):
            if row["metric"] == "micro_MRR":
                averages.setdefault(f"{row['label_set']} over {row['average']}", {})[row["system"]] = row["value"]
        context["averages"] = {"columns": systems, "rows": [(k, [v.get(s) for s in systems]) for k, v in averages.items()]}
        context["reweighted"] = _table(data.get("reweighted", []), "system")
        context["reweighted_kendall"] = _table(data.get("reweighted_kendall", []), "metric")
        open_world: dict[float, dict[str, float]] = {}
        ow_metrics: list[str] = []
        for row in data.get("open_world", []):
            open_world.setdefault(row["drop_fraction"], {})[row["metric"]] = row["mean_tau"]
            if row["metric"] not in ow_metrics:
                ow_metrics.append(row["metric"])
        context["open_world"] = {"columns": ow_metrics,
                                 "rows": [(f"{f:.0%}", [v.get(m) for m in ow_metrics]) for f, v in open_world.items()]}
        context["dp_test"] = (data.get("options") or {}).get("dp_test", "t")
        context["label_sets"] = [(name, stats) for name, stats in data.get("label_sets", {}).items()
                                 if not name.startswith("completed@")]
        context["coverage"] = [row for row in data.get("coverage", []) if not row["label_set"].startswith("completed@")]
        context["too_shallow"] = any(row["answers_unranked"] or row["judged_unranked"] or row["questions_not_scored"]
                                     for row in context["coverage"])
        for key in ("breakdown", "breakdown_macro", "relations", "averages", "reweighted_kendall", "open_world"):
            context[key] = _plain(context[key])  # rows are groups / relations / shares: no best per column
        context["reweighted"] = _with_best(context["reweighted"])
        context["protocols"] = _protocol_context(data.get("protocols"))
        context["downloads"] = [name for name in run.files if not name.endswith(".png")]
        context["figures"] = [(name, FIGURE_CAPTIONS.get(name, "")) for name in run.files if name.endswith(".png")]
    return render(request, "evaluation/report.html", context)


@staff_member_required
@require_http_methods(["POST"])
def rerun(request: HttpRequest, run_id: int) -> HttpResponse:
    """Recompute a run (new judgments of its campaign...): only pairs missing from the rank cache are scored, and
    nothing is recomputed when its inputs did not change."""
    from django.db import transaction

    from evaluation.services.evaluate import start_evaluation

    run = get_object_or_404(EvaluationRun, pk=run_id)
    if run.status in (EvaluationRun.Status.PENDING, EvaluationRun.Status.RUNNING):
        return redirect("evaluation:report", run_id=run.pk)
    with transaction.atomic():
        start_evaluation(run)
    return redirect("evaluation:report", run_id=run.pk)


@login_required
def progress(request: HttpRequest, run_id: int) -> JsonResponse:
    run = get_object_or_404(runs_visible_to(request.user), pk=run_id)
    fresh = run_progress(run)
    return JsonResponse({**fresh, "error": shown_error(run, request.user, fresh["error"])})


@login_required
def download(request: HttpRequest, run_id: int, name: str) -> FileResponse:
    run = get_object_or_404(runs_visible_to(request.user), pk=run_id)
    path = run_file(run, name)
    if path is None:
        raise Http404("no such file")
    inline = path.suffix == ".png"
    return FileResponse(open(path, "rb"), content_type=CONTENT_TYPES.get(path.suffix, "application/octet-stream"),
                        as_attachment=not inline, filename=f"evaluation-{run.pk}-{name}")
