"""Evaluation reports of a campaign are for its members and staff; runs without a campaign for anyone signed in."""
from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Role
from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_campaign_runs_are_hidden_from_non_members(tmp_path, django_user_model):
    campaign = nationality_campaign(tmp_path)
    campaign_run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)
    open_run = EvaluationRun.objects.create(sample=campaign.pool.sample)
    annotator = member(campaign, "ann", Role.ANNOTATOR)
    outsider = django_user_model.objects.create_user("outsider", password="pw")
    staff = django_user_model.objects.create_user("boss", password="pw", is_staff=True)

    for user, sees_campaign_run in ((annotator, True), (staff, True), (outsider, False)):
        client = signed_in(user)
        listing = client.get("/evaluation/").content.decode()
        assert (f"/evaluation/{campaign_run.pk}/" in listing) is sees_campaign_run, user
        assert f"/evaluation/{open_run.pk}/" in listing
        expected = 200 if sees_campaign_run else 404
        assert client.get(f"/evaluation/{campaign_run.pk}/").status_code == expected, user
        assert client.get(f"/evaluation/{campaign_run.pk}/progress.json").status_code == expected, user
        assert client.get(f"/evaluation/{open_run.pk}/").status_code == 200
    assert signed_in(outsider).get(f"/evaluation/{campaign_run.pk}/files/summary.json").status_code == 404
