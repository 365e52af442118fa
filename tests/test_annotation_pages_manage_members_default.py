"""The members page offers "annotator" as the role of a new member: a click on Add never makes an admin by
default (found by trying the site as a campaign admin)."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Membership
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


def test_a_new_member_is_an_annotator_unless_another_role_is_chosen(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "boss", "admin"))
    url = reverse("annotation:manage_members", args=[campaign.name])
    page = client.get(url).content.decode()
    selected = re.findall(r'<option value="(\w+)"[^>]*selected', page)
    assert selected == ["annotator"]
    member(campaign, "newcomer")
    # what the browser sends for the form as shown: the selected option
    assert client.post(url, {"username": "newcomer", "role": selected[0]}).status_code in (200, 302)
    assert list(Membership.objects.filter(user__username="newcomer").values_list("role", flat=True)) == ["annotator"]
