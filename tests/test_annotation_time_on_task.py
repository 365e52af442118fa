"""The time on task is measured on the server (issue 13, item 6): the review stored time_on_task_ms=86400000
sent with a 70 ms answer, which defeats the rushed-answer check. Now the server measures hand-out to answer;
the client's figure is kept beside it as a hint, never above the server's, and the rushed check reads the
server's figure: a forged day on a 70 ms answer is flagged rushed."""
from __future__ import annotations

import importlib

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Judgment
from annotation.selectors.agreement import rushed_judgments
from annotation.selectors.quality import rushed_report
from tests._annotation_support import Clock
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"
A_DAY_MS = 86_400_000


@pytest.fixture
def clock(monkeypatch):
    return Clock().install(monkeypatch)


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def answer_by_api(client, campaign, clock, *, takes_ms: float, claims_ms: int | None) -> Judgment:
    handout = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()
    clock.advance(ms=takes_ms)
    body = {"answer": "Y", "source_url": WIKI, "request_id": handout["request_id"]}
    if claims_ms is not None:
        body["time_on_task_ms"] = claims_ms
    response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/", body,
                           format="json")
    assert response.status_code == 201, response.content
    judgment = Judgment.objects.get(pk=response.json()["id"])
    assert (response.json()["time_on_task_ms"], response.json()["client_time_ms"]) == (
        judgment.time_on_task_ms, judgment.client_time_ms)
    return judgment


def test_a_forged_day_on_a_fast_answer_is_measured_and_flagged_rushed(tmp_path, clock):
    campaign = nationality_campaign(tmp_path, rushed_factor=0.25)
    careful, forger = member(campaign, "careful", "annotator"), member(campaign, "forger", "annotator")
    honest = [answer_by_api(api(careful), campaign, clock, takes_ms=20_000, claims_ms=19_000) for _ in range(3)]
    forged = [answer_by_api(api(forger), campaign, clock, takes_ms=70, claims_ms=A_DAY_MS) for _ in range(2)]
    # the page's hidden field, forged the same way
    browser = Client()
    browser.force_login(forger)
    page = browser.get(reverse("annotation:judge_next", args=[campaign.name]), follow=True)
    clock.advance(ms=70)
    browser.post(reverse("annotation:judge_item", args=[campaign.name, page.context["hand_out"]]),
                 {"answer": "Y", "source_url": WIKI, "time_on_task_ms": str(A_DAY_MS),
                  "request_id": page.context["form"].initial["request_id"]})
    forged.append(Judgment.objects.get(assignment_id=page.context["hand_out"]))
    assert [(j.time_on_task_ms, j.client_time_ms) for j in honest] == [(20_000, 19_000)] * 3  # a hint under the measure
    assert [(j.time_on_task_ms, j.client_time_ms) for j in forged] == [(70, 70)] * 3  # a day claimed, 70 ms kept
    report = rushed_report(campaign)
    assert report.median_ms == pytest.approx((70 + 20_000) / 2)  # 3 x 70 ms and 3 x 20 s
    assert sorted(j.judgment_id for j in report.judgments) == sorted(j.pk for j in forged)
    assert [a.username for a in report.flagged_annotators] == ["forger"]
    assert rushed_judgments(campaign) == sorted(j.pk for j in forged)


def test_without_a_client_figure_the_server_measure_stands_alone(tmp_path, clock):
    campaign = nationality_campaign(tmp_path)
    ann = member(campaign, "ann", "annotator")
    judgment = answer_by_api(api(ann), campaign, clock, takes_ms=4_321, claims_ms=None)
    assert (judgment.time_on_task_ms, judgment.client_time_ms) == (4_321, None)


def test_the_migration_moves_stored_client_figures_beside_the_server_measure(tmp_path, clock):
    from django.apps import apps

    migration = importlib.import_module("annotation.migrations.0004_judgment_client_time")
    campaign = nationality_campaign(tmp_path)
    ann, other = member(campaign, "ann", "annotator"), member(campaign, "other", "annotator")
    fast = answer_by_api(api(ann), campaign, clock, takes_ms=70, claims_ms=None)
    slow = answer_by_api(api(ann), campaign, clock, takes_ms=9_000, claims_ms=None)
    orphan = answer_by_api(api(other), campaign, clock, takes_ms=500, claims_ms=None)
    # as stored before: the client's figure in time_on_task_ms, no hint column; one hand-out deleted since
    Judgment.objects.filter(pk=fast.pk).update(time_on_task_ms=A_DAY_MS, client_time_ms=None)
    Judgment.objects.filter(pk=slow.pk).update(time_on_task_ms=8_000, client_time_ms=None)
    Judgment.objects.filter(pk=orphan.pk).update(time_on_task_ms=1_234, client_time_ms=None)
    orphan.assignment.delete()
    migration.measure_on_the_server(apps, None)
    rows = dict(Judgment.objects.values_list("pk", "time_on_task_ms"))
    hints = dict(Judgment.objects.values_list("pk", "client_time_ms"))
    assert (rows[fast.pk], hints[fast.pk]) == (70, 70)
    assert (rows[slow.pk], hints[slow.pk]) == (9_000, 8_000)
    assert (rows[orphan.pk], hints[orphan.pk]) == (None, 1_234)  # no hand-out: no server measure to trust
