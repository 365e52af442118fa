"""Evaluation pages: list of runs, start a run (staff), report with tables and figures, downloads.

Torch-free: reports read the stored summary.json; computing happens in evaluation.tasks (Celery).
"""
from __future__ import annotations

from pathlib import Path

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evaluation.models import EvaluationRun
from evaluation.selectors.runs import CONTENT_TYPES, evaluation_runs, run_file, run_progress, run_report
from pooling.models import Pool, Sample

MAIN_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    return render(request, "evaluation/runs.html", {"runs": evaluation_runs()[:200]})


class NewRunForm(forms.Form):
    sample = forms.ModelChoiceField(queryset=Sample.objects.select_related("kg").order_by("kg__name", "name"))
    labels_file = forms.CharField(required=False, max_length=1000,
                                  help_text="Server path of a judgments file h<TAB>r<TAB>t<TAB>Y|N (blank: sparse only)")
    pool = forms.ModelChoiceField(queryset=Pool.objects.select_related("sample").order_by("name"), required=False,
                                  help_text="Pool giving the depths (blank: the sample's only finished pool)")
    policy = forms.ChoiceField(choices=[(p, p) for p in ("realistic", "optimistic", "pessimistic")])

    def clean(self):
        data = super().clean()
        labels = data.get("labels_file")
        if labels and not Path(labels).is_file():
            self.add_error("labels_file", "no such file on the server")
        pool, sample = data.get("pool"), data.get("sample")
        if pool is not None and sample is not None and pool.sample_id != sample.pk:
            self.add_error("pool", "this pool belongs to another sample")
        return data


@staff_member_required
@require_http_methods(["GET", "POST"])
def new_run(request: HttpRequest) -> HttpResponse:
    from django.db import transaction

    from evaluation.services.evaluate import EvaluationOptions, create_run, start_evaluation
    from evaluation.services.ranks import EvaluationError

    form = NewRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                run = create_run(data["sample"], labels_file=data["labels_file"], pool=data["pool"],
                                 options=EvaluationOptions(policy=data["policy"]))
                start_evaluation(run)
        except EvaluationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("evaluation:report", run_id=run.pk)
    return render(request, "evaluation/new.html", {"form": form})


def _table(records: list[dict], index: str, columns: list[str] | None = None) -> dict:
    """{'columns': [...], 'rows': [(label, [values])]} for the template."""
    if not records:
        return {"columns": [], "rows": []}
    columns = columns or [c for c in records[0] if c != index]
    columns = [c for c in columns if c in records[0]]
    return {"columns": columns, "rows": [(r[index], [r.get(c) for c in columns]) for r in records]}


@login_required
def report(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(evaluation_runs(), pk=run_id)
    data = run_report(run)
    context = {"run": run, "data": data, "downloads": [], "figures": []}
    if data is not None:
        metrics = data.get("metrics", [])
        context["tables"] = [(name, _table(rows, "system", metrics)) for name, rows in data["tables"].items()
                             if name in ("sparse", "completed")]
        context["kendall"] = _table(data.get("kendall", []), "metric")
        depth_columns = [m for m in MAIN_METRICS if m in metrics]
        context["depth_curve"] = _table(data.get("depth_curve", []), "depth", depth_columns)
        context["probe_alpha"] = [(n, _table(rows, "system")) for n, rows in data.get("probe_alpha", {}).items()]
        context["probe_beta"] = [(n, _table(rows, "system")) for n, rows in data.get("probe_beta", {}).items()]
        context["auc"] = data.get("discriminative_auc", [])
        breakdown: dict[tuple[str, str], dict[str, float]] = {}
        for row in data.get("breakdown", []):
            if row["metric"] == "micro_MRR":
                breakdown.setdefault((row["label_set"], row["group"]), {})[row["system"]] = row["value"]
        systems = data.get("systems", [])
        context["breakdown"] = {"columns": systems,
                                "rows": [(f"{k[0]} {k[1]}", [v.get(s) for s in systems]) for k, v in breakdown.items()]}
        context["label_sets"] = [(name, stats) for name, stats in data.get("label_sets", {}).items()
                                 if not name.startswith("completed@")]
        context["downloads"] = [name for name in run.files if not name.endswith(".png")]
        context["figures"] = [name for name in run.files if name.endswith(".png")]
    return render(request, "evaluation/report.html", context)


@login_required
def progress(request: HttpRequest, run_id: int) -> JsonResponse:
    run = get_object_or_404(EvaluationRun, pk=run_id)
    return JsonResponse(run_progress(run))


@login_required
def download(request: HttpRequest, run_id: int, name: str) -> FileResponse:
    run = get_object_or_404(EvaluationRun, pk=run_id)
    path = run_file(run, name)
    if path is None:
        raise Http404("no such file")
    inline = path.suffix == ".png"
    return FileResponse(open(path, "rb"), content_type=CONTENT_TYPES.get(path.suffix, "application/octet-stream"),
                        as_attachment=not inline, filename=f"evaluation-{run.pk}-{name}")
