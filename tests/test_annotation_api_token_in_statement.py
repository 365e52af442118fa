"""The judging API checks an offered token inside its own first statement on PostgreSQL (issue 21): every answer
DRF's own token check gives must stay the same (on SQLite the requests take DRF's check: the same assertions).
A refused token gets 401 with ``WWW-Authenticate: Token``: the token authentication comes first in REST_FRAMEWORK
and DRF answers with the first authenticator's challenge (a member who may not do something gets 403)."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Judgment, Role
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db

SOURCE = "https://en.wikipedia.org/wiki/X"


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


def token_client(user=None, key: str | None = None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key or Token.objects.get_or_create(user=user)[0].key}")
    return client


def next_item(client: APIClient, name: str):
    return client.post(f"/api/campaigns/{name}/next-item/")


def submit(client: APIClient, name: str, hand_out: int, answer: str = "Y"):
    return client.post(f"/api/campaigns/{name}/hand-outs/{hand_out}/judgment/",
                       {"answer": answer, "source_url": SOURCE}, format="json")


def test_the_token_owner_is_served_and_recorded(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="owner")
    alice, bob = users(campaign, Role.ANNOTATOR, 2)
    client = token_client(bob)
    handed = next_item(client, campaign.name)
    assert handed.status_code == 200
    assert Assignment.objects.get(pk=handed.json()["hand_out"]).user == bob
    assert handed.wsgi_request.user == bob
    answered = submit(client, campaign.name, handed.json()["hand_out"])
    assert answered.status_code == 201
    assert Judgment.objects.get(pk=answered.json()["id"]).user == bob
    repeat = submit(client, campaign.name, handed.json()["hand_out"])  # the same answer again: the recorded one
    assert repeat.status_code == 200 and repeat.json()["id"] == answered.json()["id"]
    assert not Assignment.objects.filter(user=alice).exists()


def test_an_inactive_users_token_is_refused_and_nothing_is_written(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="inactive")
    (carol,) = users(campaign, Role.ANNOTATOR, 1)
    client = token_client(carol)
    hand_out = next_item(client, campaign.name).json()["hand_out"]
    carol.is_active = False
    carol.save()
    refused = [next_item(client, campaign.name), submit(client, campaign.name, hand_out)]
    assert [r.status_code for r in refused] == [401, 401]
    assert all("inactive" in r.json()["detail"] and r["WWW-Authenticate"] == "Token" for r in refused)
    assert Assignment.objects.filter(user=carol).count() == 1 and not Judgment.objects.exists()


def test_an_unknown_token_is_refused_and_counts_towards_the_address_limit(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="unknown")
    (dave,) = users(campaign, Role.ANNOTATOR, 1)
    hand_out = next_item(token_client(dave), campaign.name).json()["hand_out"]
    guesser = token_client(key="0" * 40)
    with override_settings(KGPOOL_TOKEN_FAILURE_LIMIT=3):
        answers = [next_item(guesser, campaign.name).status_code, submit(guesser, campaign.name, hand_out).status_code,
                   next_item(guesser, campaign.name).status_code, submit(guesser, campaign.name, hand_out).status_code]
        locked = next_item(guesser, campaign.name)
    assert answers == [401, 401, 401, 429]
    assert locked.status_code == 429 and locked.json()["detail"].startswith("too many invalid API tokens")
    assert not Judgment.objects.exists() and Assignment.objects.count() == 1


def test_someone_elses_hand_out_gets_403_and_a_non_member_403(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="others")
    erin, frank = users(campaign, Role.ANNOTATOR, 2)
    (grace,) = users(campaign, Role.ADJUDICATOR, 1)  # a member, but no annotator
    hand_out = next_item(token_client(erin), campaign.name).json()["hand_out"]
    assert submit(token_client(frank), campaign.name, hand_out).status_code == 403
    assert next_item(token_client(grace), campaign.name).status_code == 403
    assert next_item(token_client(frank), "no-such-campaign").status_code == 404
    assert not Judgment.objects.exists()


def test_an_offered_token_comes_before_the_session_as_in_drf(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="session")
    heidi, ivan = users(campaign, Role.ANNOTATOR, 2)
    client = token_client(ivan)
    client.force_login(heidi)  # a session cookie and someone else's token: DRF authenticates the token
    handed = next_item(client, campaign.name)
    assert handed.status_code == 200
    assert Assignment.objects.get(pk=handed.json()["hand_out"]).user == ivan
    client.credentials()  # the session alone
    assert Assignment.objects.get(pk=next_item(client, campaign.name).json()["hand_out"]).user == heidi
