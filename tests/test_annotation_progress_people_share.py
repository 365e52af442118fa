"""The campaign progress a manager sees keeps people's share apart from the automatic labels (issue 15: the bar
stood at 76.9% before anyone judged, the trivial filters' negatives counted as progress)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Item
from annotation.selectors.web import progress
from annotation.services.distribution import next_item
from annotation.services.filtering import apply_filter
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member
from tests.test_annotation_reflexive_rule import campaign  # noqa: F401

pytestmark = pytest.mark.django_db
WIKI = "https://en.wikipedia.org/wiki/Rome"


def test_people_share_starts_at_zero_and_counts_only_peoples_decisions(campaign, client):  # noqa: F811
    boss = member(campaign, "boss", "admin")
    assert apply_filter(campaign, ["reflexive"]).applied == 2  # 2 of the 4 items are automatic negatives
    before = progress(campaign, boss)
    assert (before.campaign_decided, before.campaign_total, before.campaign_percent) == (2, 4, 50.0)
    assert (before.campaign_automatic, before.campaign_people_percent) == (2, 0.0)
    client.force_login(boss)
    page = client.get(reverse("annotation:campaign", args=[campaign.name])).content.decode()
    assert 'value="0.0"' in page and "people decided 0.0% of their items" in page

    for name in ("one", "two"):  # two annotators judge every item left to people
        user = member(campaign, name, "annotator")
        while (handed := next_item(campaign, user)) is not None:
            submit_judgment(handed.item, user, "Y", WIKI)
    # (a consistency flag may send one to adjudication: "capital" has a single answer per question)
    decided_by_people = Item.objects.filter(campaign=campaign, status=Item.Status.AGREED).count()
    assert decided_by_people >= 1
    after = progress(campaign, boss)
    assert after.campaign_automatic == 2
    assert after.campaign_people_percent == round(100 * decided_by_people / 2, 1)
