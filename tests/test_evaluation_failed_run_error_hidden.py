"""A failed evaluation's error names server files and paths: staff read it, everyone else only that the run
failed (issue 15), on the report page, its progress JSON and the API."""
from __future__ import annotations

import html

import pytest
from rest_framework.test import APIClient

from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db
ERROR = "LabelError: /srv/kgpool/secret/judgments.tsv:3: unknown entity 'x'"


def seen_by(client, api: APIClient, run) -> list[str]:
    return [html.unescape(client.get(f"/evaluation/{run.pk}/").content.decode()),
            client.get(f"/evaluation/{run.pk}/progress.json").json()["error"],
            api.get(f"/api/v1/evaluations/{run.pk}/").json()["error"],
            api.get(f"/api/v1/evaluations/{run.pk}/results/").content.decode()]


def test_error_text_for_staff_only(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign,
                                       status=EvaluationRun.Status.FAILED, error=ERROR)
    api = APIClient()
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    api.force_authenticate(annotator)
    views = seen_by(client, api, run)
    assert not any("/srv/kgpool" in view for view in views)
    assert all("failed" in view for view in views)

    boss = member(campaign, "boss", staff=True)
    client.force_login(boss)
    api.force_authenticate(boss)
    assert all(ERROR in view for view in seen_by(client, api, run))
