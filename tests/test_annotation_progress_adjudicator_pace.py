"""The adjudication pages' "You:" line counts the adjudicator's decisions (how many, in the last hour, per hour),
not their judgments; the judging pages and the API keep counting judgments."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Adjudication, Assignment, Item, Role
from annotation.selectors.web import progress
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.campaigns import add_member
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db

URL = "https://www.wikidata.org/wiki/Q1"
ADJUDICATE = Assignment.Kind.ADJUDICATE


def judge(campaign, user, answer: str) -> None:
    submit_judgment(next_item(campaign, user).item, user, answer, URL)


@pytest.fixture
def adjudicator(tmp_path):
    """Two conflicts; the adjudicator judged two other items and decided one conflict."""
    campaign = star_campaign(tmp_path, items=6)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for _ in range(2):
        judge(campaign, a, "Y")
        judge(campaign, b, "N")
    assert Item.objects.filter(campaign=campaign, status=Item.Status.CONFLICT).count() == 2
    (carol,) = users(campaign, Role.ADJUDICATOR, 1)
    add_member(campaign, carol, Role.ANNOTATOR)
    judge(campaign, carol, "Y")
    judge(campaign, carol, "N")
    adjudicate(next_adjudication(campaign, carol).item, carol, "Y", "the infobox says so")
    return campaign, carol


def test_the_pace_counts_decisions_when_adjudicating(adjudicator):
    campaign, carol = adjudicator
    judging, deciding = progress(campaign, carol), progress(campaign, carol, work=ADJUDICATE)
    assert (judging.judged, judging.adjudicated, judging.last_hour, judging.per_hour) == (2, 1, 2, 2.0)
    assert (deciding.judged, deciding.adjudicated, deciding.last_hour, deciding.per_hour) == (2, 1, 1, 1.0)
    Adjudication.objects.filter(adjudicator=carol).update(decided_at=timezone.now() - timedelta(hours=4))
    later = progress(campaign, carol, work=ADJUDICATE)
    assert (later.last_hour, later.per_hour) == (0, 0.2)  # one decision over four hours
    assert "work" not in judging.as_dict()  # the API's progress is the judging one, as before


def test_the_adjudicate_page_shows_decisions_and_the_judge_page_judgments(adjudicator, client):
    campaign, carol = adjudicator
    client.force_login(carol)
    page = client.get(reverse("annotation:adjudicate_next", args=[campaign.name]), follow=True)
    text = " ".join(page.content.decode().split())
    assert "<strong>You:</strong> 1 adjudicated, 2 judged" in text
    assert 'title="your decisions in the last 60 minutes">1 in the last hour' in text
    judging = client.get(reverse("annotation:judge_next", args=[campaign.name]), follow=True)
    text = " ".join(judging.content.decode().split())
    assert "<strong>You:</strong> 2 judged, 1 adjudicated" in text
    assert 'title="your judgments in the last 60 minutes">2 in the last hour' in text


def test_the_campaign_home_of_an_adjudicator_who_does_not_judge_counts_decisions(adjudicator, client):
    campaign, carol = adjudicator
    (dave,) = users(campaign, Role.ADJUDICATOR, 1, prefix="only-adjudicator")
    adjudicate(next_adjudication(campaign, dave).item, dave, "N", "the source says otherwise")
    client.force_login(dave)
    text = " ".join(client.get(reverse("annotation:campaign", args=[campaign.name])).content.decode().split())
    assert "<strong>You:</strong> 1 adjudicated ·" in text and "0 judged" not in text
    client.force_login(carol)  # an annotator too: the home page counts judgments, as the judge page does
    text = " ".join(client.get(reverse("annotation:campaign", args=[campaign.name])).content.decode().split())
    assert "<strong>You:</strong> 2 judged, 1 adjudicated" in text
