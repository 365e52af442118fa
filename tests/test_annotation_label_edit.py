"""Correcting a label in the admin (issue 13): an answer changed on the judgment's admin page goes through the
label-edit service: the item is recomputed (agreed -> conflict), a version with who / when / old / new / why is
appended and shown read-only on the page; without a reason nothing changes. Adjudications likewise."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Adjudication, Item, Judgment, LabelVersion, Role
from annotation.services.adjudication import adjudicate
from annotation.services.distribution import next_item
from annotation.services.errors import InvalidSource
from annotation.services.item_state import find_inconsistent_items
from annotation.services.judging import submit_judgment
from annotation.services.label_edits import edit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def agreed(tmp_path):
    campaign = star_campaign(tmp_path, items=2, name="edit")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for user in (a, b):
        handed = next_item(campaign, user)
        submit_judgment(handed.item, user, "Y", URL, quote="born in")
    item = Item.objects.get(pk=handed.item_id)
    assert (item.status, item.label) == ("agreed", "Y")
    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client = Client()
    client.force_login(admin)
    return campaign, item, admin, client


def change_url(model: str, pk: int) -> str:
    return f"/admin/annotation/{model}/{pk}/change/"


def test_changing_an_answer_in_the_admin_recomputes_the_item_and_records_a_version(agreed):
    campaign, item, admin, client = agreed
    judgment = Judgment.objects.filter(item=item).order_by("pk").last()
    submitted = LabelVersion.objects.get(judgment=judgment)
    response = client.post(change_url("judgment", judgment.pk), {  # as the page's form posts it
        "answer": "N", "source_url": URL, "quote": "born in", "note": "the annotator wrote to say they misclicked",
        "versions-TOTAL_FORMS": "1", "versions-INITIAL_FORMS": "1", "versions-0-id": submitted.pk,
        "versions-0-judgment": judgment.pk,
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin) == ("conflict", "", "")
    version = LabelVersion.objects.get(judgment=judgment, reason="admin_edit")
    assert (version.old_answer, version.new_answer, version.changed_by, version.author_id) == ("Y", "N", admin, judgment.user_id)
    assert version.note == "the annotator wrote to say they misclicked"
    assert list(LabelVersion.objects.filter(judgment=judgment).values_list("reason", flat=True)) == ["submit", "admin_edit"]
    assert find_inconsistent_items(campaign) == []
    page = client.get(change_url("judgment", judgment.pk)).content.decode()
    assert "History (append-only)" in page and "the annotator wrote to say they misclicked" in page
    assert "versions-0-note" not in page  # read-only: no input for it
    assert "the annotator wrote to say they misclicked" in client.get(change_url("item", item.pk)).content.decode()


def test_without_a_reason_nothing_changes(agreed):
    _campaign, item, _admin, client = agreed
    judgment = Judgment.objects.filter(item=item).first()
    response = client.post(change_url("judgment", judgment.pk), {"answer": "N", "source_url": URL, "quote": "",
                                                               "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "1"})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    assert Judgment.objects.get(pk=judgment.pk).answer == "Y"
    assert not LabelVersion.objects.filter(reason="admin_edit").exists()
    with pytest.raises(InvalidSource):
        edit_judgment(judgment, by=_admin, note="moved", source_url="https://example.com/x")
    assert Judgment.objects.get(pk=judgment.pk).source_url == URL


def test_changing_an_adjudication_relabels_the_item(agreed):
    campaign, item, admin, client = agreed
    judgment = Judgment.objects.filter(item=item).first()
    edit_judgment(judgment, by=admin, note="misclick", answer="N")
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    decision = adjudicate(item, adjudicator, "Y", "both sources checked")
    response = client.post(change_url("adjudication", decision.pk), {
        "label": "N", "reason": "both sources checked", "note": "the adjudicator asked for the change",
        "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "1",
    })
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin) == ("adjudicated", "N", "adjudicated")
    assert list(LabelVersion.objects.filter(adjudication=decision).values_list("old_answer", "new_answer")) == [("", "Y"), ("Y", "N")]
    assert Adjudication.objects.get(pk=decision.pk).label == "N"
    assert find_inconsistent_items(campaign) == []


def test_a_source_is_checked_by_the_campaigns_evidence_policy(agreed):
    """The admin's edit meets the rules an annotator's answer meets (default policy: a source for Yes only)."""
    campaign, item, admin, _client = agreed
    first, second = Judgment.objects.filter(item=item).order_by("pk")
    with pytest.raises(InvalidSource):  # a Yes keeps its source
        edit_judgment(first, by=admin, note="no source", source_url="")
    with pytest.raises(InvalidSource, match="(?i)scheme|url"):  # a doubled URL is refused as on the judge page
        edit_judgment(first, by=admin, note="pasted twice", source_url=URL + "https://en.wikipedia.org/wiki/X")
    first.refresh_from_db()
    assert first.source_url == URL
    cleared = edit_judgment(second, by=admin, note="a No needs no source", answer="N", source_url="")
    assert (cleared.answer, cleared.source_url, cleared.source_domain) == ("N", "", "")
    assert LabelVersion.objects.get(judgment=second, reason="admin_edit").old_answer == "Y"
