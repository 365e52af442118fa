"""Judging guidelines on the site (issue 15): an annotator's first visit to the judge page shows the guidelines
and asks to confirm reading them (once per version); the judge and adjudication pages show the campaign's and the
question's relation's guidelines, rendered safely; campaign admins edit them on a manage page, others may not."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse

from annotation.models import Membership
from annotation.selectors.guidelines import current_digest
from annotation.services.guidelines import set_guidelines
from tests._annotation_web_support import NAT, member, nationality_campaign

pytestmark = pytest.mark.django_db

HOSTILE = "Judge **carefully**.\n\n<script>alert('x')</script> [bad](javascript:alert(1)) [guide](https://example.org/g)"


def judge(client, campaign):
    return client.get(reverse("annotation:judge_next", args=[campaign.name]))


def test_first_visit_asks_to_read_the_guidelines_then_judges(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    set_guidelines(campaign, HOSTILE, {NAT: "Nationality means *citizenship*."})
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)

    first = judge(client, campaign)
    assert first.status_code == 302 and first.url == reverse("annotation:guidelines", args=[campaign.name])
    page = client.get(first.url)
    body = page.content.decode()
    assert "<strong>carefully</strong>" in body and "<em>citizenship</em>" in body
    assert "<script>alert" not in body and 'href="javascript' not in body and 'href="https://example.org/g"' in body
    assert 'id="confirm-guidelines"' in body

    confirmed = client.post(first.url, {"digest": page.context["guidelines"].digest})
    assert confirmed.url == reverse("annotation:judge_next", args=[campaign.name])
    assert Membership.objects.get(user=annotator, role="annotator").guidelines_read == current_digest(campaign)
    handed = judge(client, campaign)
    assert "/judge/" in handed.url  # a hand-out now, not the guidelines
    item_page = client.get(handed.url)
    shown = item_page.content.decode()
    assert "<strong>carefully</strong>" in shown and "<em>citizenship</em>" in shown and "<script>alert" not in shown
    assert 'id="confirm-guidelines"' not in client.get(first.url).content.decode()  # read: no second confirmation


def test_changed_guidelines_ask_again_and_a_stale_confirmation_is_refused(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    set_guidelines(campaign, "Version 1", {})
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    url = reverse("annotation:guidelines", args=[campaign.name])
    old = client.get(url).context["guidelines"].digest
    client.post(url, {"digest": old})
    assert "/judge/" in judge(client, campaign).url

    campaign.refresh_from_db()
    assert set_guidelines(campaign, "Version 2", {})
    assert judge(client, campaign).url == url
    stale = client.post(url, {"digest": old}, follow=True)
    assert "changed while you read" in html.unescape(stale.content.decode())
    assert Membership.objects.get(user=annotator).guidelines_read == old
    client.post(url, {"digest": current_digest(campaign)})
    assert "/judge/" in judge(client, campaign).url


def test_no_guidelines_no_detour_and_a_hand_out_url_also_asks(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    handed = judge(client, campaign)
    assert "/judge/" in handed.url
    set_guidelines(campaign, "New rules", {})
    again = client.get(handed.url)  # the open hand-out's page: the new guidelines come first
    assert again.status_code == 302 and again.url == reverse("annotation:guidelines", args=[campaign.name])


def test_only_the_relation_of_the_question_is_shown_beside_it(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    from pooling.models import Relation

    other = Relation.objects.create(kg=campaign.pool.sample.kg, index=99, key="/other/rel", text="other")
    set_guidelines(campaign, "", {NAT: "About nationality", other.key: "About the other relation"})
    annotator = member(campaign, "ann", "annotator")
    Membership.objects.filter(user=annotator).update(guidelines_read=current_digest(campaign))
    client.force_login(annotator)
    body = client.get(judge(client, campaign).url).content.decode()
    assert "About nationality" in body and "About the other relation" not in body
    full = client.get(reverse("annotation:guidelines", args=[campaign.name])).content.decode()
    assert "About nationality" in full and "About the other relation" in full


def test_adjudication_page_shows_the_guidelines(tmp_path, client):
    from tests.test_annotation_pages_judging import take_item  # noqa: F401 - same flow as the judging pages
    from annotation.services.distribution import next_item
    from annotation.services.judging import submit_judgment

    campaign = nationality_campaign(tmp_path, entries=1)
    set_guidelines(campaign, "Adjudicators: *read both sources*.", {})
    ann, bob = member(campaign, "ann", "annotator"), member(campaign, "bob", "annotator")
    ada = member(campaign, "ada", "adjudicator")
    for user, answer in ((ann, "Y"), (bob, "N")):
        item = next_item(campaign, user).item
        submit_judgment(item, user, answer, "https://en.wikipedia.org/wiki/Jeremy_Irons")
    client.force_login(ada)
    handed = client.get(reverse("annotation:adjudicate_next", args=[campaign.name]))
    body = client.get(handed.url).content.decode()
    assert "<em>read both sources</em>" in body


def test_manage_page_edits_guidelines_for_admins_only(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    url = reverse("annotation:manage_guidelines", args=[campaign.name])
    client.force_login(member(campaign, "ann", "annotator"))
    assert client.get(url).status_code == 403
    assert client.post(url, {"campaign": "hijack"}).status_code == 403

    client.force_login(member(campaign, "boss", "admin"))
    page = client.get(url)
    assert page.status_code == 200 and f'name="relation-{NAT}"' in page.content.decode()
    saved = client.post(url, {"campaign": "Use *Wikipedia*.", f"relation-{NAT}": "Citizenship only."})
    assert saved.status_code == 302
    campaign.refresh_from_db()
    assert campaign.guidelines == "Use *Wikipedia*." and campaign.relation_guidelines == {NAT: "Citizenship only."}
    refused = client.post(url, {"campaign": "x", "relation-/no/such": "text"})
    assert refused.status_code == 400 and "no relation" in html.unescape(refused.content.decode())
    too_long = client.post(url, {"campaign": "x" * 20_001})
    assert too_long.status_code == 400
    campaign.refresh_from_db()
    assert campaign.guidelines == "Use *Wikipedia*."
