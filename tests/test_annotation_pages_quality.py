"""Quality pages (issue 8) with the Django test client: the quality page (gold accuracy with Wilson intervals
and warnings, rushed annotators, consistency flags, agreement with bootstrap intervals and the AC1 figure) and
its buttons, the adjudication page with both evidences and the flags, the expert audit (blind expert page,
admin sample and report), export links, role checks (403 for annotators)."""
from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django.urls import reverse

from annotation.models import AuditItem, ExpertReview, Item, Label
from annotation.selectors.quality import CI_GROUPINGS
from annotation.services.campaigns import create_campaign
from annotation.services.distribution import next_item
from annotation.services.gold import add_gold_items
from annotation.services.judging import submit_judgment
from annotation.services.reuse import reused_count
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

SOURCE = {"one": "https://en.wikipedia.org/wiki/Jeremy_Irons", "two": "https://www.imdb.com/name/nm0000460/bio/"}
SECRET_QUOTE = "secret-evidence-of"


def text(response) -> str:
    return html.unescape(response.content.decode())


def judge_everything(campaign, users, answer_of, ms_of):
    """Each user answers every item they get, taking ``ms_of(user)`` on each (a clock of our own: the server
    measures the time on task from the hand-out)."""
    clock = timezone.now()
    for user in users:
        while (assignment := next_item(campaign, user, now=clock)) is not None:
            item = Item.objects.get(pk=assignment.item_id)
            clock += timedelta(milliseconds=ms_of(user))
            submit_judgment(item, user, answer_of(item, user), SOURCE[user.username],
                            quote=f"{SECRET_QUOTE} {user.username}", now=clock)


@pytest.fixture
def world(tmp_path):
    """Campaign ``first`` judged Y by both annotators; campaign ``second`` on the same pool with gold checks,
    judged N by both (so every item contradicts ``first``: cross-campaign flags, conflicts), annotator ``two``
    rushing and wrong on gold."""
    first = nationality_campaign(tmp_path, name="first", entries=3)
    one, two = member(first, "one", "annotator"), member(first, "two", "annotator")
    judge_everything(first, [one, two], lambda item, user: "Y", lambda user: 6000)
    second = create_campaign("second", first.pool, gold_rate=0.67, reuse=False)
    for user in (one, two):
        member(second, user.username, "annotator")
    add_gold_items(second, seed=0)

    def answer(item, user):
        if item.is_gold:
            return item.gold_answer if user.username == "one" else ("N" if item.gold_answer == "Y" else "Y")
        return "N"

    judge_everything(second, [one, two], answer, lambda user: 8000 if user.username == "one" else 300)
    admin = member(second, "boss", "admin")
    member(first, "boss", "admin")
    return {"first": first, "second": second, "one": one, "two": two, "admin": admin}


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_quality_page_shows_gold_rushed_flags_and_agreement(world):
    second, admin = world["second"], world["admin"]
    page = client_of(admin).get(reverse("annotation:manage_quality", args=[second.name]), {"samples": 200})
    assert page.status_code == 200
    body = text(page)
    rows = {r["username"]: r for r in page.context["gold_rows"]}
    assert (rows["one"]["correct"], rows["one"]["total"]) == (2, 2) and not rows["one"]["warn"]
    assert (rows["two"]["correct"], rows["two"]["total"]) == (0, 2) and rows["two"]["warn"]
    assert 'id="gold-warnings"' in body and "two</strong>: 0/2 gold checks right" in body
    low, high = rows["two"]["accuracy"]["low"], rows["two"]["accuracy"]["high"]
    assert low == 0.0 and 0.6 < high < 0.7  # Wilson interval of 0/2
    flagged = {a.username: a.flagged for a in page.context["rushed"].annotators}
    assert flagged == {"one": False, "two": True} and "rushing" in body
    flags = {f.kind: f.items for f in page.context["flags"]}
    assert flags["cross_campaign"] == 3 and flags["kg_states"] == 0
    assert [t["by"] for t in page.context["tables"]] == list(CI_GROUPINGS)
    overall = page.context["tables"][0]["rows"][0]
    assert overall["items"] == 3 and overall["percent"]["estimate"] == 1.0
    assert 'id="ac1-figure"' in body and "<circle" in body
    for by in CI_GROUPINGS:
        assert f'id="ci-{by}"' in body
    assert "Add gold checks" in body and "Re-check" in body


def test_quality_buttons_add_gold_and_recheck(world):
    first, second, admin = world["first"], world["second"], world["admin"]
    client = client_of(admin)
    first.gold_rate = 0.67
    first.save()
    assert not Item.objects.filter(campaign=first, is_gold=True).exists()
    response = client.post(reverse("annotation:manage_quality_gold", args=[first.name]), {"seed": "4"})
    assert response.status_code == 302
    assert Item.objects.filter(campaign=first, is_gold=True).count() == 2
    assert "Gold checks: 2 added" in text(client.get(response.url))
    # the flags are gone (say, cleared by hand): the re-check finds them again
    Item.objects.filter(campaign=second).update(flags=[])
    response = client.post(reverse("annotation:manage_quality_recheck", args=[second.name]))
    assert response.status_code == 302
    assert Item.objects.filter(campaign=second, is_gold=False).exclude(flags=[]).count() == 3
    assert "3 flagged item(s)" in text(client.get(response.url))
    # annotators may neither look nor press
    annotator = client_of(world["one"])
    assert annotator.get(reverse("annotation:manage_quality", args=[second.name])).status_code == 403
    assert annotator.post(reverse("annotation:manage_quality_gold", args=[second.name])).status_code == 403
    assert annotator.post(reverse("annotation:manage_quality_recheck", args=[second.name])).status_code == 403
    assert client.get(reverse("annotation:manage_quality_gold", args=[second.name])).status_code == 405


def test_adjudication_page_shows_both_evidences_and_the_flags(world):
    second = world["second"]
    judge = client_of(member(second, "arbiter", "adjudicator"))
    response = judge.get(reverse("annotation:adjudicate_next", args=[second.name]))
    assert response.status_code == 302
    page = judge.get(response.url)
    assert page.status_code == 200
    body = text(page)
    for username in ("one", "two"):
        assert f'href="{SOURCE[username]}"' in body and f"{SECRET_QUOTE} {username}" in body
    assert "wikipedia.org" in body and "imdb.com" in body  # the allow-listed domains
    assert "8.0 s" in body and "0.3 s" in body  # time on task
    assert 'rel="noopener noreferrer nofollow"' in body
    assert "cross_campaign" in body and "labelled differently in another campaign" in body
    assert "Annotator A" in body and "Annotator B" in body
    evidence = page.context["case"]["evidence"]
    assert [e["answer"] for e in evidence] == ["N", "N"] and {e["source_domain"] for e in evidence} == {"wikipedia.org", "imdb.com"}


def test_expert_audit_blind_page_and_admin_report(world):
    first, admin = world["first"], world["admin"]
    expert = member(first, "expert", "expert")
    client = client_of(admin)
    # the admin draws the sample
    response = client.post(reverse("annotation:manage_audit_draw", args=[first.name]),
                           {"size": "2", "seed": "1", "yes_share": "1"})
    assert response.status_code == 302
    assert AuditItem.objects.filter(campaign=first).count() == 2
    assert "Audit sample drawn: 2 items" in text(client.get(response.url))
    # the expert's page: the triple and its question, never the final label, its origin or the answers
    ex = client_of(expert)
    answers = []
    for n in range(2):
        page = ex.get(reverse("annotation:audit_next", args=[first.name]))
        assert page.status_code == 200
        body = text(page)
        assert "Is Jeremy Irons's nationality" in body and 'data-choice="label"' in body
        for hidden in ("unanimous", "agreed", "adjudicated", "reused", "rule:", SECRET_QUOTE, "imdb.com/name",
                       "Final", "final label"):
            assert hidden not in body, hidden
        assert not {k for k in page.context.keys() if "final" in k or "origin" in k or "answer" in k}
        position = page.context["position"]
        label = "N" if n == 0 else "Y"  # the final labels are all Y: one disagreement
        answers.append(label)
        posted = ex.post(reverse("annotation:audit_item", args=[first.name, position]), {"label": label})
        assert posted.status_code == 302
    assert sorted(ExpertReview.objects.filter(expert=expert).values_list("label", flat=True)) == ["N", "Y"]
    done = ex.get(reverse("annotation:audit_next", args=[first.name]))
    assert "Nothing left for you to audit" in text(done)
    # the admin's report
    page = client.get(reverse("annotation:manage_audit", args=[first.name]))
    assert page.status_code == 200
    report = page.context["report"]
    assert (report.sample, report.answered, report.overall.agree) == (2, 2, 1)
    assert report.overall.percent == 0.5
    assert [r.group for r in report.by_origin] == ["unanimous"]
    assert len(page.context["disagreements"]) == 1 and "Is Jeremy Irons's nationality" in text(page)
    # roles: annotators and experts never see the admin side; annotators get no expert page
    annotator = client_of(world["one"])
    assert annotator.get(reverse("annotation:audit_next", args=[first.name])).status_code == 403
    assert annotator.post(reverse("annotation:audit_item", args=[first.name, 0]), {"label": "Y"}).status_code == 403
    assert annotator.get(reverse("annotation:manage_audit", args=[first.name])).status_code == 403
    assert annotator.post(reverse("annotation:manage_audit_draw", args=[first.name]), {"size": "2"}).status_code == 403
    assert ex.get(reverse("annotation:manage_audit", args=[first.name])).status_code == 403
    assert ex.get(reverse("annotation:manage_quality", args=[first.name])).status_code == 403
    # a redraw after answers is refused with a message, the sample stays
    again = client.post(reverse("annotation:manage_audit_draw", args=[first.name]),
                        {"size": "2", "seed": "2", "yes_share": "0.5", "replace": "1"})
    assert "no longer be redrawn" in text(client.get(again.url))
    assert AuditItem.objects.filter(campaign=first).count() == 2


def test_dashboard_links_quality_audit_exports_and_reused_count(world):
    first, second, admin = world["first"], world["second"], world["admin"]
    third = create_campaign("third", first.pool)  # takes over first's final labels
    member(third, "boss", "admin")
    assert reused_count(third) == 3
    client = client_of(admin)
    page = client.get(reverse("annotation:manage", args=[third.name]))
    body = text(page)
    assert page.status_code == 200 and 'id="reused-count">3<' in body
    assert reverse("annotation:manage_quality", args=[third.name]) in body
    assert reverse("annotation:manage_audit", args=[third.name]) in body
    page = text(client.get(reverse("annotation:manage", args=[second.name])))
    assert reverse("annotation:manage_export", args=[second.name, "labels-origin"]) in page
    for username in ("one", "two"):
        assert reverse("annotation:manage_export", args=[second.name, "qrels-annotator"]) + f"?annotator={username}" in page
    assert '<a href="/campaigns/">Campaigns</a>' in page  # the site header
    export = client.get(reverse("annotation:manage_export", args=[first.name, "labels-origin"]))
    assert export.status_code == 200 and "labels-origin.tsv" in export["Content-Disposition"]
    assert "\tY\tunanimous" in export.content.decode()
    annotator = client_of(world["one"])
    for view in ("manage", "manage_quality", "manage_audit"):
        assert annotator.get(reverse(f"annotation:{view}", args=[second.name])).status_code == 403
    # expert nav link and campaign list
    member(first, "expert", "expert")
    expert_home = text(client_of(member(first, "expert")).get(reverse("annotation:campaign", args=[first.name])))
    assert reverse("annotation:audit_next", args=[first.name]) in expert_home


def test_anonymous_users_are_sent_to_login(world):
    second = world["second"]
    client = Client()
    for url in (reverse("annotation:manage_quality", args=[second.name]), reverse("annotation:manage_audit", args=[second.name]),
                reverse("annotation:audit_next", args=[second.name])):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/"), url
