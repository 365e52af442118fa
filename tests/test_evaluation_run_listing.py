"""The list of evaluations says where each run's labels come from (issue 15: a run made from a campaign was
listed as "sparse only"): the campaign, the labels file (its server path for staff only) or sparse only."""
from __future__ import annotations

import html
import re

import pytest

from evaluation.models import EvaluationRun
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


def labels_column(client) -> dict[int, str]:
    body = html.unescape(client.get("/evaluation/").content.decode())
    rows = re.findall(r'<a href="/evaluation/(\d+)/">\d+</a></td>\s*<td>[^<]*</td>\s*<td>([^<]*)</td>', body)
    return {int(pk): labels.strip() for pk, labels in rows}


def test_each_run_names_its_labels(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    sample = campaign.pool.sample
    from_campaign = EvaluationRun.objects.create(sample=sample, campaign=campaign)
    from_file = EvaluationRun.objects.create(sample=sample, labels_file="/srv/labels/judgments.tsv")
    sparse = EvaluationRun.objects.create(sample=sample)

    client.force_login(member(campaign, "boss", staff=True))
    assert labels_column(client) == {from_campaign.pk: "campaign nat", from_file.pk: "/srv/labels/judgments.tsv",
                                     sparse.pk: "sparse only"}
    report = html.unescape(client.get(f"/evaluation/{from_campaign.pk}/").content.decode())
    assert "Labels: campaign nat" in report

    client.force_login(member(campaign, "ann", "annotator"))
    assert labels_column(client) == {from_campaign.pk: "campaign nat", from_file.pk: "labels file",
                                     sparse.pk: "sparse only"}
    assert "/srv/labels" not in client.get(f"/evaluation/{from_file.pk}/").content.decode()
