"""A submit that also hands out the next item (``"next": true``, issue 21): one round trip per item, as the judging
page's in-place save. The answer carries exactly what next-item would have answered, on both judging paths."""
from __future__ import annotations

import pytest

from annotation.models import Assignment, Item, Judgment
from tests._annotation_web_support import member, nationality_campaign
from tests.test_annotation_api_judging import WIKI, api, next_item

pytestmark = pytest.mark.django_db


def submit(client, campaign, handout: dict, **values):
    body = {"answer": "Y", "source_url": WIKI, "request_id": handout["request_id"], "next": True}
    body.update(values)
    return client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/", body, format="json")


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_each_answer_hands_out_the_next_item_until_none_is_left(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)
    seen = []
    while handout["hand_out"] is not None:
        seen.append(handout["hand_out"])
        response = submit(client, campaign, handout)
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["hand_out"] == handout["hand_out"] and body["answer"] == "Y"
        handout = body["next"]
        if handout["hand_out"] is not None:
            # exactly next-item's answer: it is the person's open hand-out, which next-item gives back
            assert next_item(client, campaign) == handout
            assert set(handout) == {"hand_out", "item", "request_id", "expires_at", "allowed_domains"}
            assert "id" not in handout["item"]  # addressed by hand-out, never by item pk
    assert handout == next_item(client, campaign)  # nothing left: the same "done" answer
    assert handout["item"] is None and handout["detail"] == "nothing left for you to judge in this campaign"
    assert len(seen) == len(set(seen)) == Item.objects.filter(campaign=campaign).count() == 3
    assert sorted(Judgment.objects.filter(user=user).values_list("assignment_id", flat=True)) == sorted(seen)
    assert not Assignment.objects.filter(user=user, state=Assignment.State.OPEN).exists()


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_a_repeated_submit_gives_the_same_next_hand_out_and_no_second_one(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)
    first = submit(client, campaign, handout)
    again = submit(client, campaign, handout)  # the client lost the first answer and sends it again
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["next"] == first.json()["next"]  # the person's open hand-out comes back, no new one
    assert Assignment.objects.filter(user=user).count() == 2
    assert Judgment.objects.filter(user=user).count() == 1


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_without_next_the_answer_has_no_hand_out_and_none_is_opened(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)
    for body in ({"next": False}, {}):
        response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/judgment/",
                               {"answer": "N", "source_url": WIKI, "request_id": handout["request_id"], **body},
                               format="json")
        assert response.status_code in (200, 201) and "next" not in response.json()
    assert list(Assignment.objects.filter(user=user).values_list("state", flat=True)) == [Assignment.State.DONE]


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_a_refused_submit_hands_out_nothing(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)
    bad_source = submit(client, campaign, handout, source_url="https://evil.example/x")
    assert bad_source.status_code == 400 and "next" not in bad_source.json()
    other = member(campaign, "bob", "annotator")
    not_mine = submit(api(other), campaign, handout)
    assert not_mine.status_code == 403 and "next" not in not_mine.json()
    # nothing judged, and only the first hand-out open: no next one was taken by either refusal
    assert not Judgment.objects.exists()
    assert list(Assignment.objects.values_list("pk", "state")) == [(handout["hand_out"], Assignment.State.OPEN)]


def test_next_says_so_when_the_person_is_no_longer_an_annotator(tmp_path, settings, monkeypatch):
    """The judgment is stored whatever happens to the hand-out after it (its own transaction)."""
    from annotation.api import hot_path
    from annotation.services.errors import NotAllowed

    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    client = api(user)
    handout = next_item(client, campaign)

    def removed(*_args, **_kwargs):
        raise NotAllowed(f"{user} is not an annotator of campaign {campaign.name}")

    settings.KGPOOL_JUDGING_PATH = "legacy"  # next_item itself, which refuses
    monkeypatch.setattr(hot_path, "next_item", removed)
    response = submit(client, campaign, handout)
    assert response.status_code == 201, response.content
    assert response.json()["next"] == {"hand_out": None, "item": None, "request_id": "", "expires_at": None,
                                       "allowed_domains": [],
                                       "detail": f"ann is not an annotator of campaign {campaign.name}"}
    assert Judgment.objects.filter(user=user, assignment_id=handout["hand_out"]).count() == 1
