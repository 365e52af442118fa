"""The evaluation form queues the run and redirects to its page at once (issue 15: it blocked the request for
14 s): with workers nothing is computed in the request; the run page says "queued" / "running, N of M", shows a
progress bar and points its script at the progress JSON."""
from __future__ import annotations

import pytest
from celery.canvas import _chain

from evaluation import task_names
from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "boss", staff=True))
    return client, campaign


def test_the_form_redirects_to_the_queued_run_without_computing(staff_client, monkeypatch,
                                                                  django_capture_on_commit_callbacks):
    client, campaign = staff_client
    sent: list[list[str]] = []
    # a worker's broker: the chain is sent, never run here
    monkeypatch.setattr(_chain, "delay", lambda self, *a, **k: sent.append([t.task for t in self.tasks]))

    def computed(*args, **kwargs):
        raise AssertionError("the request computed the run")

    monkeypatch.setattr("evaluation.services.runs.run_evaluation", computed)
    monkeypatch.setattr("evaluation.services.runs.score_run", computed)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/new/", {"sample": campaign.pool.sample.pk, "campaign": campaign.pk,
                                                    "policy": "realistic", "dp_test": "t"})
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert response.url == f"/evaluation/{run.pk}/"
    assert sent == [[task_names.SCORE_EVALUATION, task_names.RUN_EVALUATION]]
    assert (run.status, run.stage) == (EvaluationRun.Status.PENDING, "queued")

    page = client.get(response.url).content.decode()
    assert "Status:\n     <strong>queued</strong>" in page
    assert f'data-progress-url="/evaluation/{run.pk}/progress.json"' in page
    assert '<progress id="bar"' in page and "evaluation/report.js" in page
    assert client.get(f"/evaluation/{run.pk}/progress.json").json()["status"] == "pending"


def test_a_running_run_says_how_far_it_is(staff_client):
    client, campaign = staff_client
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign, status="running",
                                       stage="scoring", progress_done=3, progress_total=8)
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert "<strong>running</strong>, scoring, 3 of 8" in page
    assert '<progress id="bar" max="8" value="3"' in page


def test_the_form_says_when_the_embedded_mode_computes_in_the_request(staff_client, settings):
    client, _campaign = staff_client
    settings.CELERY_TASK_ALWAYS_EAGER = True
    page = client.get("/evaluation/new/").content.decode()
    assert 'data-embedded="1"' in page and "Embedded mode" in page and "evaluation/new.js" in page
    settings.CELERY_TASK_ALWAYS_EAGER = False
    page = client.get("/evaluation/new/").content.decode()
    assert 'data-embedded=""' in page and "Embedded mode" not in page
