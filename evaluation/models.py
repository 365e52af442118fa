"""Evaluation runs: a sample's systems evaluated on its sparse / completed / completed-at-depth labels (SPEC 5).

Labels come from a judgments file (``labels_file``) or a judging campaign (``campaign``), never both.
The tables, figures and downloads live in files under STORAGE_DIR (``result_dir``); ``summary`` keeps the small
part (Kendall's tau, label counts) for listings.
"""
from __future__ import annotations

from django.db import models

from pooling.models import Pool, Sample, System


class EvaluationRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="evaluation_runs", db_index=False)
    name = models.CharField(max_length=200, blank=True)
    systems = models.ManyToManyField(System, related_name="evaluation_runs")
    labels_file = models.CharField(max_length=1000, blank=True,
                                   help_text="Judgments file h<TAB>r<TAB>t<TAB>Y|N (blank: sparse labels only)")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="evaluation_runs",
                                 help_text="Judging campaign whose final labels complete the sample (gold checks never count)")
    pool = models.ForeignKey(Pool, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                             help_text="Pool giving the depth of judged triples (blank: the sample's only pool)")
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    stage = models.CharField(max_length=100, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    result_dir = models.CharField(max_length=500, blank=True, help_text="Relative to STORAGE_DIR")
    files = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["sample", "status"], name="evaluation_run_sample_status")]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of {self.sample}"
