"""The evaluate command, the Celery task (eager), the report page and downloads."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._evaluation_support import build_campaign
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_command_prints_tables_and_writes_files(storage, tmp_path, capsys):
    campaign = build_campaign(tmp_path, architectures=("distmult", "transe", "complex"))
    out = tmp_path / "out"
    names = ",".join(s.name for s in campaign.systems)
    call_command("evaluate", campaign.sample.name, labels=str(campaign.judgments), systems=names, out=str(out))
    text = capsys.readouterr().out
    assert "== sparse labels ==" in text and "== completed labels ==" in text and "Kendall" in text
    expected = {"summary.json", "metrics.csv", "kendall.csv", "depth_curve.csv", "breakdown.csv", "probe.csv",
                "probe_heatmap.csv", "discriminative_power.csv", "data_sensitivity.csv", "depth_curve.png",
                "probe_heatmap.png", "discriminative_power.png", "data_sensitivity.png"}
    assert expected <= {p.name for p in out.iterdir()}
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["systems"] == names.split(",")
    with open(out / "metrics.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert {r["label_set"] for r in rows} >= {"sparse", "completed", "completed@0", "completed@3"}
    sparse = {r["system"]: float(r["micro_MRR"]) for r in rows if r["label_set"] == "sparse"}
    assert np.isclose(sparse[campaign.systems[0].name], summary["tables"]["sparse"][0]["micro_MRR"], rtol=1e-5)
    with open(out / "depth_curve.csv") as stream:
        assert [r["depth"] for r in csv.DictReader(stream)] == ["0", "1", "2", "3"]

    from evaluation.models import EvaluationRun

    call_command("evaluate", f"umls/{campaign.sample.name}", labels=str(campaign.judgments), save=True,
                 no_figures=True, no_analyses=True)
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.DONE and "metrics.csv" in run.files
    assert not any(name.endswith(".png") for name in run.files)
    assert f"saved evaluation run {run.pk}" in capsys.readouterr().out

    with pytest.raises(CommandError, match="no sample"):
        call_command("evaluate", "nope")
    with pytest.raises(CommandError, match="no system"):
        call_command("evaluate", campaign.sample.name, systems="ghost")
    bad = tmp_path / "bad.tsv"
    bad.write_text("C0001\tisa\tC0002\tmaybe\n")
    with pytest.raises(CommandError, match="bad.tsv:1"):
        call_command("evaluate", campaign.sample.name, labels=str(bad))


def test_task_report_page_and_downloads(storage, tmp_path, client, django_user_model,
                                        django_capture_on_commit_callbacks):
    from evaluation.models import EvaluationRun
    from evaluation.services.evaluate import create_run, start_evaluation

    campaign = build_campaign(tmp_path, architectures=("distmult", "transe"))
    run = create_run(campaign.sample, labels_file=str(campaign.judgments))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        start_evaluation(run)
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.DONE, run.error
    assert "summary.json" in run.files and "depth_curve.png" in run.files
    assert run.summary["systems"] == sorted(s.name for s in campaign.systems)

    user = django_user_model.objects.create_user("viewer", password="pw")
    client.force_login(user)
    page = client.get(f"/evaluation/{run.pk}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "Metrics on the completed labels" in body and "Kendall" in body and "depth_curve.png" in body
    listing = client.get("/evaluation/")
    assert listing.status_code == 200 and f"/evaluation/{run.pk}/" in listing.content.decode()
    csv_file = client.get(f"/evaluation/{run.pk}/files/metrics.csv")
    assert csv_file.status_code == 200 and b"".join(csv_file.streaming_content).startswith(b"label_set,system")
    png = client.get(f"/evaluation/{run.pk}/files/probe_heatmap.png")
    assert png.status_code == 200 and png["Content-Type"] == "image/png"
    assert client.get(f"/evaluation/{run.pk}/files/..%2Fsecret").status_code == 404
    assert client.get(f"/evaluation/{run.pk}/files/nothing.csv").status_code == 404
    progress = client.get(f"/evaluation/{run.pk}/progress.json").json()
    assert progress["status"] == "done"
    # starting a run needs staff
    assert client.get("/evaluation/new/").status_code == 302
    user.is_staff = True
    user.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/new/", {"sample": campaign.sample.pk, "labels_file": str(campaign.judgments),
                                                    "policy": "realistic", "pool": ""})
    assert response.status_code == 302
    newest = EvaluationRun.objects.order_by("-pk").first()
    assert newest.pk != run.pk and newest.status == EvaluationRun.Status.DONE
    # the second run reused every cached rank
    from evaluation.selectors.runs import run_report

    assert all(s["computed"] == 0 for s in run_report(newest)["rank_stats"].values())


def test_web_modules_do_not_import_torch():
    import subprocess
    import sys

    code = ("import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'kgpool.settings'); django.setup(); "
            "import evaluation.views, evaluation.urls, evaluation.selectors.runs, evaluation.services.evaluate, "
            "evaluation.admin; import kgpool.urls; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
