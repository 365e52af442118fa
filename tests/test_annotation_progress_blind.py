"""Progress figures keep annotators blind (issue 13, item 2). The review's channel: annotator 2 reads the
campaign's "decided" count (API progress, and the strip on the judge page after "Saved."), answers an item
annotator 1 already judged, and reads it again: +1 told that annotator 1 gave the same answer. Here the same
two annotators play it twice, once agreeing and once not; what annotator 2 can read of the campaign must be
the same before and after the submit and the same in both plays. Staff and campaign admins keep exact
figures; the annotators' coarse figure still follows the work, once an hour."""
from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item
from tests._annotation_support import Clock
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"
CAMPAIGN_FIELDS = ("campaign_total", "campaign_percent", "exact", "campaign_decided", "campaign_last_hour",
                   "campaign_as_of")


@pytest.fixture
def clock(monkeypatch):
    # half past an hour, so that the few seconds the plays take never cross an hour
    start = timezone.now().replace(minute=30, second=0, microsecond=0)
    return Clock(start).install(monkeypatch)


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def campaign_figures(client, campaign) -> dict:
    progress = client.get(f"/api/campaigns/{campaign.name}/progress/").json()
    return {key: progress.get(key) for key in CAMPAIGN_FIELDS}


def campaign_strip(response) -> str:
    """The campaign part of the page's progress strip, as text."""
    body = html.unescape(response.content.decode())
    strip = body[body.index('class="progress-strip"'):]
    strip = strip[: strip.index("</div>")].split("Campaign:", 1)[1]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", strip)).strip()


def play(tmp_path, clock, name: str, second_answer: str) -> dict:
    """Annotator 1 answers Y; annotator 2 reads the figures, answers the same item, reads them again."""
    campaign = nationality_campaign(tmp_path, name=name)
    one, two = member(campaign, f"{name}-one", "annotator"), member(campaign, f"{name}-two", "annotator")
    boss = member(campaign, f"{name}-boss", "admin")
    first = api(one).post(f"/api/campaigns/{campaign.name}/next-item/").json()
    assert api(one).post(f"/api/campaigns/{campaign.name}/hand-outs/{first['hand_out']}/judgment/",
                         {"answer": "Y", "source_url": WIKI}, format="json").status_code == 201
    clock.advance(5)
    pages = Client()
    pages.force_login(two)
    page = pages.get(reverse("annotation:judge_next", args=[campaign.name]), follow=True)
    hand_out = page.context["hand_out"]
    # the queue still hands out partly judged items first; nothing annotator 2 sees tells so
    assert Assignment.objects.get(pk=hand_out).item_id == Assignment.objects.get(pk=first["hand_out"]).item_id
    before = {"api": campaign_figures(api(two), campaign), "page": campaign_strip(page)}
    exact_before = campaign_figures(api(boss), campaign)
    clock.advance(5)
    saved = pages.post(reverse("annotation:judge_item", args=[campaign.name, hand_out]), follow=True,
                       data={"answer": second_answer, "source_url": WIKI,
                             "request_id": page.context["form"].initial["request_id"]})
    assert "Saved." in html.unescape(saved.content.decode())
    after = {"api": campaign_figures(api(two), campaign), "page": campaign_strip(saved)}
    exact_after = campaign_figures(api(boss), campaign)
    status = Item.objects.get(assignments__pk=hand_out).status
    return {"before": before, "after": after, "exact": (exact_before, exact_after), "status": status,
            "campaign": campaign, "two": two}


def test_annotator_figures_do_not_tell_whether_the_other_annotator_agreed(tmp_path, clock):
    agreeing = play(tmp_path, clock, "agree", "Y")
    disagreeing = play(tmp_path, clock, "differ", "N")
    assert (agreeing["status"], disagreeing["status"]) == (Item.Status.AGREED, Item.Status.CONFLICT)
    for run in (agreeing, disagreeing):
        assert run["before"] == run["after"]  # the submit moved nothing annotator 2 can read of the campaign
        assert run["after"]["api"]["exact"] is False
        assert run["after"]["api"]["campaign_decided"] is None and run["after"]["api"]["campaign_last_hour"] is None
        assert "decided" not in run["after"]["page"] and "judgments/h" not in run["after"]["page"]
    assert agreeing["after"] == disagreeing["after"]  # and it reads the same whatever annotator 1 answered
    # the campaign's admin keeps the exact, live count: +1 only where the answers agreed
    assert [run["exact"][1]["campaign_decided"] - run["exact"][0]["campaign_decided"]
            for run in (agreeing, disagreeing)] == [1, 0]
    assert all(run["exact"][1]["exact"] is True and run["exact"][1]["campaign_last_hour"] == 2
               for run in (agreeing, disagreeing))


def test_the_annotator_figure_follows_the_work_once_an_hour(tmp_path, clock):
    run = play(tmp_path, clock, "hourly", "Y")
    assert run["after"]["api"]["campaign_percent"] == 0.0  # nothing was given before this hour began
    clock.advance(3600)
    figures = campaign_figures(api(run["two"]), run["campaign"])
    # 2 judgments given of 3 items x 2 needed: 33.3 %, floored to a whole percent
    assert figures["campaign_percent"] == 33.0 and figures["campaign_decided"] is None
