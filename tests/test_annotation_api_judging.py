"""JSON API of the judging workflow (DRF, token and session auth): happy path, idempotent submit, 4xx errors,
adjudication, OpenAPI schema."""
from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, Judgment, Label
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def next_item(client, campaign) -> dict:
    response = client.post(f"/api/campaigns/{campaign.name}/next-item/")
    assert response.status_code == 200, response.content
    return response.json()


def submit(client, campaign, handout, **values):
    body = {"answer": "Y", "source_url": WIKI, "request_id": handout["request_id"], "time_on_task_ms": 3000}
    body.update(values)
    return client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/", body, format="json")


def test_happy_path_with_token(tmp_path):
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    campaigns = client.get("/api/campaigns/").json()
    assert campaigns == [{"name": "nat", "description": "", "kg": "nat-kg", "roles": ["annotator"], "manage": False,
                          "allowed_domains": campaign.allowed_domains}]
    handout = next_item(client, campaign)
    item = handout["item"]
    assert item["question"].startswith("Is Jeremy Irons's nationality ")
    assert item["head"]["name"] == "Jeremy Irons" and item["head"]["url"] == WIKI and "/film/actor" in item["head"]["types"]
    assert item["origins"][0]["tail"] == "Ireland"
    assert "id" not in item  # work is addressed by hand-out, never by item pk
    assert next_item(client, campaign)["hand_out"] == handout["hand_out"]  # my open hand-out comes back
    response = submit(client, campaign, handout, quote="English actor")
    assert response.status_code == 201, response.content
    assert response.json()["answer"] == "Y"
    # the time on task is the server's (hand-out to answer); the client's 3000 ms is a hint, never above it
    assert response.json()["client_time_ms"] == min(3000, response.json()["time_on_task_ms"])
    assert response.json()["hand_out"] == handout["hand_out"] and "item" not in response.json()
    progress = client.get(f"/api/campaigns/{campaign.name}/progress/").json()
    assert progress["judged"] == 1 and progress["campaign_total"] == 3
    skip = next_item(client, campaign)
    assert client.post(f"/api/campaigns/{campaign.name}/hand-outs/{skip['hand_out']}/skip/").status_code == 200
    assert next_item(client, campaign)["hand_out"] not in (handout["hand_out"], skip["hand_out"])
    assert len(set(Assignment.objects.filter(user=user).values_list("item_id", flat=True))) == 3


def test_double_submit_is_one_judgment(tmp_path):
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)
    assert submit(client, campaign, handout).status_code == 201
    again = submit(client, campaign, handout)
    assert again.status_code == 200
    assert Judgment.objects.filter(user=user).count() == 1
    assert Assignment.objects.get(pk=handout["hand_out"]).item.num_judgments == 1
    # a different answer later is a conflict with what is recorded
    changed = submit(client, campaign, handout, answer="N", request_id="another")
    assert changed.status_code == 409 and "cannot be changed" in changed.json()["detail"]
    # ... also under the first request's id: another answer is no retry of it
    same_id = submit(client, campaign, handout, answer="N")
    assert same_id.status_code == 409 and "(Y); a judgment cannot be changed" in same_id.json()["detail"]
    assert list(Judgment.objects.filter(user=user).values_list("answer", flat=True)) == ["Y"]


def test_errors_are_clear(tmp_path):
    campaign = nationality_campaign(tmp_path)
    one, two = member(campaign, "one", "annotator"), member(campaign, "two", "annotator")
    outsider = member(nationality_campaign(tmp_path, name="other"), "outsider", "annotator")
    c1, c2 = api(one), api(two)
    handout = next_item(c1, campaign)
    bad = submit(c1, campaign, handout, source_url="https://example.org/x")
    assert bad.status_code == 400 and "not a verified source" in bad.json()["detail"]
    assert "source_url" in bad.json()
    assert c1.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/", {"answer": "maybe"},
                   format="json").status_code == 400
    # someone else's hand-out
    theirs = submit(c2, campaign, {"hand_out": handout["hand_out"], "request_id": "x"})
    assert theirs.status_code == 403 and "not handed to you" in theirs.json()["detail"]
    assert c2.get(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/").status_code == 403
    assert c2.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/skip/").status_code == 403
    assert api(outsider).post(f"/api/campaigns/{campaign.name}/next-item/").status_code == 403
    assert c1.post("/api/campaigns/nope/next-item/").status_code == 404
    assert c1.post(f"/api/campaigns/{campaign.name}/hand-outs/999999/judgment/", {}, format="json").status_code == 404
    assert c1.post(f"/api/campaigns/{campaign.name}/next-adjudication/").status_code == 403  # not an adjudicator


def test_adjudication_via_api_and_judges_get_nothing(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=1)
    one = member(campaign, "one", "annotator", "adjudicator")  # judges, so may never adjudicate this item
    two = member(campaign, "two", "annotator")
    boss = member(campaign, "boss", "adjudicator")
    for user, answer in ((one, "Y"), (two, "N")):
        client = api(user)
        assert submit(client, campaign, next_item(client, campaign), answer=answer).status_code == 201
    item = Item.objects.get(campaign=campaign)
    assert item.status == Item.Status.CONFLICT
    c1 = api(one)
    nothing = c1.post(f"/api/campaigns/{campaign.name}/next-adjudication/")
    assert nothing.status_code == 200 and nothing.json()["item"] is None
    cb = api(boss)
    handout = cb.post(f"/api/campaigns/{campaign.name}/next-adjudication/").json()
    assert handout["hand_out"] == Assignment.objects.get(user=boss, kind="adjudicate").pk and "id" not in handout["item"]
    # one judged the item: not through boss's hand-out, not through one's own judging hand-out
    for hand_out in (handout["hand_out"], Assignment.objects.get(user=one).pk):
        sneaky = c1.post(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out}/adjudication/",
                         {"label": "Y", "reason": "me"}, format="json")
        assert sneaky.status_code in (403, 404)
    assert sorted(a["answer"] for a in handout["answers"]) == ["N", "Y"]
    assert all(a["source_url"] == WIKI for a in handout["answers"])
    assert "annotator-" not in str(handout) and "one" not in [a["annotator"] for a in handout["answers"]]
    decided = cb.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/adjudication/",
                      {"label": "N", "reason": "only British"}, format="json")
    assert decided.status_code == 201, decided.content
    assert decided.json()["hand_out"] == handout["hand_out"]
    item.refresh_from_db()
    assert (item.status, item.label) == (Item.Status.ADJUDICATED, Label.NO)
    late = cb.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/adjudication/",
                   {"label": "Y", "reason": "x"}, format="json")
    assert late.status_code == 409
    assert str(item.pk) not in late.json()["detail"]


def test_session_auth_needs_csrf_and_schema_is_served(tmp_path):
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get("/api/campaigns/").status_code == 200
    assert client.post(f"/api/campaigns/{campaign.name}/next-item/").status_code == 403  # no CSRF token
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    text = schema.content.decode()
    for path in ("/api/campaigns/{name}/next-item/", "/api/campaigns/{name}/hand-outs/{hand_out}/judgment/",
                 "/api/campaigns/{name}/hand-outs/{hand_out}/skip/", "/api/campaigns/{name}/next-adjudication/",
                 "/api/campaigns/{name}/hand-outs/{hand_out}/adjudication/", "/api/campaigns/{name}/progress/"):
        assert path in text
    assert "item_id" not in text
    assert client.get("/api/docs/").status_code == 200
