"""The judging API takes and returns "can't tell" (issue 15): answer C (or cant_tell) with a comment (as
``comment`` or ``quote``), 400 without one; the adjudicator's hand-out lists it with the comment. The API's
fast submit path (PostgreSQL) and the service path give the same answers. An answer is undone by its hand-out
(409 once someone else acted on it)."""
from __future__ import annotations

import pytest

from annotation.models import Item, Judgment
from tests._annotation_web_support import member, nationality_campaign
from tests.test_annotation_api_judging import api, next_item, submit

pytestmark = pytest.mark.django_db


def test_submit_and_read_back_can_t_tell(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=1)
    ann, bob = member(campaign, "ann", "annotator"), member(campaign, "bob", "annotator")
    boss = member(campaign, "boss", "adjudicator")
    client = api(ann)
    handout = next_item(client, campaign)
    refused = submit(client, campaign, handout, answer="C", source_url="")
    assert refused.status_code == 400 and "comment" in refused.json()["detail"]
    assert refused.json()["quote"] == [refused.json()["detail"]]  # the field it is about, as a bad source's
    changed = submit(client, campaign, handout, answer="C", source_url="", comment="   ")
    assert changed.status_code == 400 and changed.json()["quote"]
    response = submit(client, campaign, handout, answer="cant_tell", source_url="", comment="two actors of that name")
    assert response.status_code == 201, response.content
    assert (response.json()["answer"], response.json()["quote"], response.json()["source_url"]) == \
        ("C", "two actors of that name", "")
    assert submit(client, campaign, handout, answer="C", source_url="", comment="two actors of that name") \
        .status_code == 200  # the same request again: a repeat
    other = api(bob)
    second = submit(other, campaign, next_item(other, campaign), answer="N", source_url="")
    assert second.status_code == 201, second.content
    assert Item.objects.get().status == "conflict"
    case = api(boss).post(f"/api/campaigns/{campaign.name}/next-adjudication/").json()
    assert [(a["answer"], a["quote"]) for a in case["answers"]] == [("C", "two actors of that name"), ("N", "")]
    assert Judgment.objects.count() == 2


def test_undo_by_hand_out(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=1)
    ann, bob = member(campaign, "ann", "annotator"), member(campaign, "bob", "annotator")
    client = api(ann)
    handout = next_item(client, campaign)
    url = f"/api/campaigns/{campaign.name}/hand-outs/{handout['hand_out']}/undo/"
    assert client.post(url).status_code == 409  # nothing answered yet
    assert submit(client, campaign, handout, answer="N", source_url="").status_code == 201
    assert api(bob).post(url).status_code == 403  # not bob's hand-out
    undone = client.post(url)
    assert undone.status_code == 200 and undone.json()["hand_out"] == handout["hand_out"]
    assert not Judgment.objects.exists() and Judgment.all_objects.get().answer == "N"
    again = submit(client, campaign, handout, answer="Y")  # the same hand-out (and request id) answered anew
    assert again.status_code == 201 and again.json()["answer"] == "Y"
    other = api(bob)
    assert submit(other, campaign, next_item(other, campaign), answer="Y").status_code == 201
    refused = client.post(url)
    assert refused.status_code == 409 and "someone else" in refused.json()["detail"]
