"""Reads of the evaluation app (torch-free, safe on the web request path)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Q, QuerySet

from evaluation.models import EvaluationRun
from pooling.storage import storage_path

CONTENT_TYPES = {".csv": "text/csv", ".json": "application/json", ".png": "image/png"}


def evaluation_runs(sample=None) -> QuerySet[EvaluationRun]:
    runs = EvaluationRun.objects.select_related("sample__kg", "pool", "campaign")
    return runs.filter(sample=sample) if sample is not None else runs


def runs_visible_to(user) -> QuerySet[EvaluationRun]:
    """The runs ``user`` may open: staff see all; others the runs of campaigns they belong to (any role) and the
    runs without a campaign (sparse labels or a labels file: no campaign's judgments in them)."""
    runs = evaluation_runs()
    if getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        return runs
    member_of = EvaluationRun.objects.filter(campaign__memberships__user=user).values("pk")
    return runs.filter(Q(campaign__isnull=True) | Q(pk__in=member_of))


HIDDEN_ERROR = "the evaluation failed; an administrator can see why"


def shown_error(run: EvaluationRun, user, error: str | None = None) -> str:
    """The run's error as ``user`` may read it: staff get the text (it names server files and paths), everyone
    else only that the run failed. ``error``: the text when already read (else ``run.error``)."""
    error = run.error if error is None else error
    if not error or getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        return error
    return HIDDEN_ERROR


def run_file(run: EvaluationRun, name: str) -> Path | None:
    """Path of one of the run's output files, or None (unknown name, not done, missing)."""
    if run.status != EvaluationRun.Status.DONE or not run.result_dir or name not in (run.files or []):
        return None
    path = storage_path(f"{run.result_dir}/{name}")
    return path if path.is_file() else None


def run_report(run: EvaluationRun) -> dict[str, Any] | None:
    """The run's summary.json as a dict (None until it is done)."""
    path = run_file(run, "summary.json")
    if path is None:
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def run_progress(run: EvaluationRun) -> dict[str, Any]:
    fresh = EvaluationRun.objects.filter(pk=run.pk).values(
        "status", "stage", "progress_done", "progress_total", "error").get()
    return fresh


def campaign_decided_counts(campaign) -> dict[str, int]:
    """How many of the campaign's items (gold checks apart) have a final label, of how many."""
    from annotation.models import Item
    from annotation.selectors.labels import FINAL_STATUSES

    items = Item.objects.filter(campaign=campaign, is_gold=False)
    return {"decided": items.filter(status__in=FINAL_STATUSES).exclude(label="").count(), "total": items.count()}


@dataclass(frozen=True)
class Completion:
    """How far a run's campaign was judged: ``decided`` of ``total`` items. ``at_run``: counted when the run was
    computed (False for runs stored before the count was kept: counted now)."""

    decided: int
    total: int
    at_run: bool

    @property
    def partial(self) -> bool:
        return self.decided < self.total

    @property
    def percent(self) -> float:
        return 100.0 * self.decided / self.total if self.total else 0.0


def run_completion(run: EvaluationRun) -> Completion | None:
    """The judging completion behind a campaign run's completed labels (None: the run has no campaign)."""
    if not run.campaign_id:
        return None
    stored = (run.summary or {}).get("campaign_items")
    if stored:
        return Completion(stored["decided"], stored["total"], at_run=True)
    counts = campaign_decided_counts(run.campaign)
    return Completion(counts["decided"], counts["total"], at_run=False)
