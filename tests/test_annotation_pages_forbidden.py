"""A refused page (403) or a missing one (404) is a page of the site: the header with its navigation, the reason in
words and a way on, not a bare "403 Forbidden" (found from outside: an admin who opened the judging page)."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse

from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


def test_an_admin_on_the_judging_page_is_told_why_and_where_to_go(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "boss", "admin"))
    response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
    assert response.status_code == 403
    text = html.unescape(response.content.decode())
    assert "This page is for the campaign's annotators." in text
    assert f'href="{reverse("annotation:campaigns")}"' in text and "Log out" in text  # the site's header


def test_a_stranger_is_told_they_are_not_a_member(tmp_path, client, django_user_model):
    campaign = nationality_campaign(tmp_path)
    client.force_login(django_user_model.objects.create_user("stranger", password="x" * 12))
    response = client.get(reverse("annotation:campaign", args=[campaign.name]))
    assert response.status_code == 403
    assert f"You are not a member of campaign {campaign.name}." in html.unescape(response.content.decode())


def test_a_missing_page_is_a_page_of_the_site(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 404
    text = html.unescape(response.content.decode())
    assert "There is no page at <code>/accounts/login/</code>." in text and 'href="/login/"' in text
