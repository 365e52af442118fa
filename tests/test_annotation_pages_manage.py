"""Campaign management pages (role admin / staff): dashboard, members, sources, trivial filter, templates
with live preview, agreement, exports in every format."""
from __future__ import annotations

import html

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Membership, QuestionTemplate
from annotation.services.exports import FORMATS
from annotation.services.campaigns import create_campaign
from tests._annotation_support import tiny_pool
from tests._annotation_web_support import NAT, member, nationality_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=2)
    admin = member(campaign, "admin", "admin")
    client = Client()
    client.force_login(admin)
    return campaign, client


def judge_all(campaign, answers_of: dict[str, str]):
    """Each named annotator judges every item with their answer (through the pages)."""
    for username, answer in answers_of.items():
        client = Client()
        client.force_login(member(campaign, username, "annotator"))
        while True:
            response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
            if response.status_code != 302:
                break
            page = client.get(response.url)
            client.post(response.url, {"answer": answer, "source_url": "https://en.wikipedia.org/wiki/X",
                                       "request_id": page.context["form"].initial["request_id"]})


def test_dashboard_counts_and_staff_access(setup, tmp_path):
    campaign, client = setup
    judge_all(campaign, {"one": "Y", "two": "Y"})
    page = client.get(reverse("annotation:manage", args=[campaign.name]))
    assert page.status_code == 200
    counts = {status: n for status, _label, n, _pct in page.context["counts"]}
    assert counts["agreed"] == 2 and counts["pending"] == 0 and counts["conflict"] == 0
    for status in ("pending", "in_progress", "agreed", "conflict", "adjudicated", "auto_negative"):
        assert f'data-status="{status}"' in page.content.decode()
    staff = Client()
    staff.force_login(member(campaign, "staffer", staff=True))
    assert staff.get(reverse("annotation:manage", args=[campaign.name])).status_code == 200


def test_members_and_sources(setup):
    campaign, client = setup
    member(campaign, "newbie")  # an account without role
    url = reverse("annotation:manage_members", args=[campaign.name])
    assert client.post(url, {"username": "newbie", "role": "annotator"}).status_code == 302
    assert Membership.objects.filter(campaign=campaign, user__username="newbie", role="annotator").exists()
    missing = client.post(url, {"username": "ghost", "role": "annotator"})
    assert missing.status_code == 400 and "no user with this name" in missing.content.decode()
    user_pk = Membership.objects.get(user__username="newbie").user_id
    assert client.post(url, {"remove": "1", "user": user_pk, "role": "annotator"}).status_code == 302
    assert not Membership.objects.filter(user__username="newbie").exists()
    url = reverse("annotation:manage_domains", args=[campaign.name])
    assert client.post(url, {"domains": "Wikipedia.org\nimdb.com\n"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.allowed_domains == ["wikipedia.org", "imdb.com"]
    bad = client.post(url, {"domains": "wikipedia.org/wiki"})
    assert bad.status_code == 400 and "bare domain" in bad.content.decode()


def test_filter_preview_apply_revert(tmp_path):
    # two candidates (Jeremy Irons, nationality, X) and one self-loop (Jeremy Irons, nationality, Jeremy Irons)
    # that train never allows for nationality: the filter labels exactly that one
    pooled = [("irons", NAT, "uk"), ("irons", NAT, "usa"), ("irons", NAT, "irons")]
    pool = tiny_pool(tmp_path, name="loop-kg", train=[("streep", NAT, "usa"), ("caine", NAT, "uk")],
                     test=[("irons", NAT, "ireland")], entries=pooled)
    campaign = create_campaign("loop", pool)
    client = Client()
    client.force_login(member(campaign, "admin", "admin"))
    url = reverse("annotation:manage_filter", args=[campaign.name])
    rules = {"rules": ["reflexive"], "threshold": "1.5"}
    preview = client.get(url, rules)
    assert preview.status_code == 200
    report = preview.context["report"]
    assert (report.entries, report.labelled) == (3, 1)
    assert not Item.objects.filter(campaign=campaign, status="auto_negative").exists()  # a preview writes nothing
    apply = client.post(reverse("annotation:manage_filter_apply", args=[campaign.name]), rules)
    assert apply.status_code == 302
    labelled = Item.objects.filter(campaign=campaign, status="auto_negative")
    assert set(labelled.values_list("tail__key", "label", "rule")) == {("irons", "N", "reflexive")}
    revert = client.post(reverse("annotation:manage_filter_revert", args=[campaign.name]), {"confirm": "all"})
    assert revert.status_code == 302
    assert not Item.objects.filter(campaign=campaign, status="auto_negative").exists()
    assert Item.objects.get(campaign=campaign, tail__key="irons").status == "pending"


def test_templates_edit_and_live_preview(setup):
    campaign, client = setup
    relation = Item.objects.filter(campaign=campaign).first().relation
    preview_url = reverse("annotation:manage_template_preview", args=[campaign.name])
    ok = client.get(preview_url, {"relation": relation.pk, "text": "Does {head} hold a {tail} passport?"})
    assert ok.status_code == 200
    questions = [row["question"] for row in ok.json()["rows"]]
    assert "Does Jeremy Irons hold a United Kingdom passport?" in questions
    bad = client.get(preview_url, {"relation": relation.pk, "text": "Is {head} {nope}?"})
    assert bad.status_code == 400 and "placeholder" in bad.json()["error"]
    page = client.get(reverse("annotation:manage_templates", args=[campaign.name]))
    assert page.status_code == 200 and NAT in page.content.decode()
    url = reverse("annotation:manage_templates", args=[campaign.name])
    assert client.post(url, {"relation": relation.pk, "text": "Does {head} hold a {tail} passport?"}).status_code == 302
    assert QuestionTemplate.objects.get(campaign=campaign, relation=relation).text == "Does {head} hold a {tail} passport?"
    wrong = client.post(url, {"relation": relation.pk, "text": "no placeholders"})
    assert wrong.status_code == 400
    assert client.post(url, {"relation": relation.pk, "text": "x", "reset": "1"}).status_code == 302
    assert not QuestionTemplate.objects.filter(campaign=campaign).exists()


def test_agreement_page_and_exports(setup):
    campaign, client = setup
    judge_all(campaign, {"one": "Y", "two": "N"})
    page = client.get(reverse("annotation:manage_agreement", args=[campaign.name]))
    assert page.status_code == 200
    tables = {t["by"]: t for t in page.context["tables"]}
    assert tables["overall"]["rows"][0]["items"] == 2 and tables["overall"]["rows"][0]["values"][0] == 0.0
    assert tables["pair"]["rows"][0]["group"] == "one – two"
    assert set(tables) == {"overall", "pair", "relation", "category"}
    assert "<svg" in page.content.decode()
    for fmt in FORMATS:
        query = {"annotator": "one"} if fmt == "qrels-annotator" else {}
        response = client.get(reverse("annotation:manage_export", args=[campaign.name, fmt]), query)
        assert response.status_code == 200, fmt
        assert f'filename="{campaign.name}-' in response["Content-Disposition"]
    labels = html.unescape(client.get(reverse("annotation:manage_export", args=[campaign.name, "labels"])).content.decode())
    assert "irons\t/people/person/nationality\tireland\tY" in labels
    assert client.get(reverse("annotation:manage_export", args=[campaign.name, "pdf"])).status_code == 404
    if "qrels-annotator" in FORMATS:
        assert client.get(reverse("annotation:manage_export", args=[campaign.name, "qrels-annotator"])).status_code == 400
