"""Expired means closed, on every path (issue 13, item 5): a judge hand-out past its expiry took a judgment
(201) although its page answered 409, and a lapsed adjudication hand-out still decided the conflict after it
had gone to a second adjudicator. With a clock the test moves: API, pages, skip and adjudication all refuse a
hand-out past its time, before and after the expiry sweep released it, and nothing is written."""
from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Adjudication, Assignment, Item, Judgment
from annotation.services.distribution import release_expired
from tests._annotation_support import Clock
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"
TIMEOUT = 60


@pytest.fixture
def clock(monkeypatch):
    return Clock().install(monkeypatch)


@pytest.fixture
def campaign(tmp_path):
    return nationality_campaign(tmp_path, assignment_timeout_s=TIMEOUT)


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def pages(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("released", [False, True], ids=["lapsed", "released"])
def test_an_expired_judge_hand_out_takes_nothing(campaign, clock, released):
    ann = member(campaign, "ann", "annotator")
    client = api(ann)
    base = f"/api/campaigns/{campaign.name}"
    handout = client.post(f"{base}/next-item/").json()
    hand_out = handout["hand_out"]
    clock.advance(TIMEOUT + 1)
    if released:
        assert release_expired(campaign) == 1
    assert client.get(f"{base}/hand-outs/{hand_out}/").status_code == 409
    answer = {"answer": "Y", "source_url": WIKI, "request_id": handout["request_id"]}
    refused = client.post(f"{base}/hand-outs/{hand_out}/judgment/", answer, format="json")
    assert refused.status_code == 409 and "expired" in refused.json()["detail"]
    assert client.post(f"{base}/hand-outs/{hand_out}/skip/").status_code == 409
    # the page's form post and skip button: nothing stored, on to new work with a warning
    browser = pages(ann)
    posted = browser.post(reverse("annotation:judge_item", args=[campaign.name, hand_out]), answer)
    assert posted.status_code == 302 and posted.url == reverse("annotation:judge_next", args=[campaign.name])
    assert any("expired" in str(m) for m in get_messages(posted.wsgi_request))
    browser.post(reverse("annotation:judge_skip", args=[campaign.name, hand_out]))
    assert not Judgment.objects.exists()
    assignment = Assignment.objects.get(pk=hand_out)
    assert assignment.state == ("expired" if released else "open")  # never answered, never skipped
    if not released:  # the sweep still finds it, and the item goes back to the queue untouched
        assert release_expired(campaign) == 1
    item = assignment.item
    item.refresh_from_db()
    assert (item.num_judgments, item.num_active, item.status) == (0, 0, Item.Status.PENDING)


def test_a_hand_out_answered_in_time_is_taken_up_to_its_last_moment(campaign, clock):
    ann = member(campaign, "ann", "annotator")
    handout = api(ann).post(f"/api/campaigns/{campaign.name}/next-item/").json()
    clock.advance(TIMEOUT - 0.001)
    response = api(ann).post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/",
                             {"answer": "Y", "source_url": WIKI}, format="json")
    assert response.status_code == 201


def test_a_lapsed_adjudication_hand_out_decides_nothing(campaign, clock):
    one, two = member(campaign, "one", "annotator"), member(campaign, "two", "annotator")
    first, second = member(campaign, "first", "adjudicator"), member(campaign, "second", "adjudicator")
    base = f"/api/campaigns/{campaign.name}"
    for user, answer in ((one, "Y"), (two, "N")):
        handout = api(user).post(f"{base}/next-item/").json()
        assert api(user).post(f"{base}/hand-outs/{handout['hand_out']}/judgment/",
                              {"answer": answer, "source_url": WIKI}, format="json").status_code == 201
    stale = api(first).post(f"{base}/next-adjudication/").json()
    assert stale["hand_out"] is not None
    assert api(second).post(f"{base}/next-adjudication/").json()["hand_out"] is None  # held by the first
    clock.advance(TIMEOUT + 1)
    fresh = api(second).post(f"{base}/next-adjudication/").json()  # lapsed: the conflict goes to the second
    assert fresh["hand_out"] is not None and fresh["item"] == stale["item"]
    decision = {"label": "Y", "reason": "the infobox says so"}
    refused = api(first).post(f"{base}/hand-outs/{stale['hand_out']}/adjudication/", decision, format="json")
    assert refused.status_code == 409 and "closed" in refused.json()["detail"]
    page = pages(first).post(reverse("annotation:adjudicate_item", args=[campaign.name, stale["hand_out"]]), decision)
    assert page.status_code == 302 and not Adjudication.objects.exists()
    item = Assignment.objects.get(pk=stale["hand_out"]).item
    item.refresh_from_db()
    assert item.status == Item.Status.CONFLICT
    decided = api(second).post(f"{base}/hand-outs/{fresh['hand_out']}/adjudication/", {"label": "N", "reason": "no"},
                               format="json")
    assert decided.status_code == 201 and Adjudication.objects.get().adjudicator == second
