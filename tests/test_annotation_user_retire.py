"""Deleting a user who judged (issue 13): the ORM refuses (their judgments are PROTECTed); the admin's delete
page and "delete selected" action deactivate them instead, cancel their open hand-outs and recompute the items,
keeping every judgment; a user never given work is deleted. ``manage.py deactivate_user`` does the same."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import ProtectedError
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, Judgment, Role
from annotation.services.distribution import next_item
from annotation.services.item_state import find_inconsistent_items
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def judged(tmp_path):
    """``gone`` judged 3 items (agreed with ``other``) and holds an open hand-out of a 4th that ``other`` judged."""
    campaign = star_campaign(tmp_path, items=5, name="retire")
    gone, other = users(campaign, Role.ANNOTATOR, 2)
    for _ in range(3):
        for user in (gone, other):
            handed = next_item(campaign, user)
            submit_judgment(handed.item, user, "Y", URL)
    handed = next_item(campaign, other)
    submit_judgment(handed.item, other, "N", URL)
    open_hand_out = next_item(campaign, gone)
    assert open_hand_out.item_id == handed.item_id
    admin = get_user_model().objects.create_superuser("retire-root", password="pw-root-123")
    client = Client()
    client.force_login(admin)
    return campaign, gone, other, open_hand_out, client


def test_the_orm_refuses_to_delete_a_user_with_judgments(judged):
    _campaign, gone, *_ = judged
    with pytest.raises(ProtectedError):
        gone.delete()
    assert Judgment.objects.filter(user=gone).count() == 3


def test_the_admin_deactivates_instead_of_deleting(judged):
    campaign, gone, other, open_hand_out, client = judged
    token = Token.objects.create(user=gone)
    url = f"/admin/auth/user/{gone.pk}/delete/"
    page = client.get(url).content.decode()
    assert "will be DEACTIVATED, not deleted: they have 4 assignments; 3 judgments; 3 label versions" in page
    response = client.post(url, {"post": "yes"}, follow=True)
    assert "deactivated, not deleted" in response.content.decode()
    gone.refresh_from_db()
    assert not gone.is_active
    assert Judgment.objects.filter(user=gone).count() == 3
    assert Assignment.objects.get(pk=open_hand_out.pk).state == Assignment.State.CANCELLED
    item = Item.objects.get(pk=open_hand_out.item_id)
    assert (item.status, item.num_judgments, item.num_active) == ("in_progress", 1, 1)  # back in the queue
    assert find_inconsistent_items(campaign) == []
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.post(f"/api/campaigns/{campaign.name}/next-item/").status_code == 401


def test_the_delete_action_deletes_users_without_work_and_deactivates_the_others(judged):
    campaign, gone, other, _open, client = judged
    idle = get_user_model().objects.create_user("retire-idle")
    response = client.post("/admin/auth/user/", {"action": "delete_selected", "_selected_action": [gone.pk, idle.pk],
                                                 "post": "yes"}, follow=True)
    text = response.content.decode().lower()
    assert "user retire-idle deleted" in text and f"user {gone.username} deactivated, not deleted" in text
    assert not get_user_model().objects.filter(username="retire-idle").exists()
    assert get_user_model().objects.get(pk=gone.pk).is_active is False
    assert find_inconsistent_items(campaign) == []


def test_deactivate_user_command(judged):
    campaign, gone, *_ = judged
    out = io.StringIO()
    call_command("deactivate_user", gone.username, stdout=out)
    assert "1 open hand-out(s) cancelled, 1 item(s) back in the queue" in out.getvalue()
    assert not get_user_model().objects.get(pk=gone.pk).is_active
    assert find_inconsistent_items(campaign) == []


def test_unticking_active_in_the_admin_also_frees_their_hand_outs(judged):
    campaign, gone, _other, open_hand_out, client = judged
    joined = gone.date_joined
    response = client.post(f"/admin/auth/user/{gone.pk}/change/", {
        "username": gone.username, "first_name": "", "last_name": "", "email": "",
        "date_joined_0": joined.strftime("%Y-%m-%d"), "date_joined_1": joined.strftime("%H:%M:%S"),
        "initial-date_joined_0": joined.strftime("%Y-%m-%d"), "initial-date_joined_1": joined.strftime("%H:%M:%S"),
    })  # "is_active" left out: unticked
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not get_user_model().objects.get(pk=gone.pk).is_active
    assert Assignment.objects.get(pk=open_hand_out.pk).state == Assignment.State.CANCELLED
    assert find_inconsistent_items(campaign) == []
