"""Reverting every automatic label from the manage page needs a confirmation (issue 15): the form carries a
required checkbox, and a post without it reverts nothing."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Item
from annotation.services.filtering import apply_filter
from tests._annotation_web_support import member
from tests.test_annotation_reflexive_rule import campaign  # noqa: F401

pytestmark = pytest.mark.django_db


def test_revert_all_asks_for_confirmation(campaign, client):  # noqa: F811
    client.force_login(member(campaign, "boss", "admin"))
    applied = apply_filter(campaign, ["reflexive"]).applied
    auto = Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE)
    page = client.get(reverse("annotation:manage_filter", args=[campaign.name])).content.decode()
    assert f'name="confirm" value="all" required> send all {applied} back to people' in page
    url = reverse("annotation:manage_filter_revert", args=[campaign.name])
    refused = client.post(url, follow=True)
    assert "Nothing reverted" in refused.content.decode() and auto.count() == applied == 2
    client.post(url, {"confirm": "all"})
    assert not auto.exists()
