"""A "can't tell" answer (issue 15): a comment is required and no source; the item still gets its other
judgments and then goes to adjudication (never agreed), where the comment is shown; consistency checks ignore
it; on a gold check it is not a pass."""
from __future__ import annotations

import pytest

from annotation.models import Item, Judgment, Role
from annotation.selectors import web
from annotation.selectors.gold import gold_accuracy_by_annotator
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.errors import AnnotationError
from annotation.services.answers import parse_answer
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://www.wikidata.org/wiki/Q1"


def test_spellings_and_only_for_annotators():
    for spelling in ("C", "c", "cant_tell", "can't tell", "?"):
        assert parse_answer(spelling, cant_tell=True) == "C"
    with pytest.raises(AnnotationError, match="Y or N"):
        parse_answer("C")  # a final label (adjudication, expert) is Y or N


def test_a_comment_is_required_and_no_source(tmp_path):
    campaign = star_campaign(tmp_path, items=1, evidence_policy="both")
    a, = users(campaign, Role.ANNOTATOR, 1)
    handed = next_item(campaign, a)
    with pytest.raises(AnnotationError, match="comment"):
        submit_judgment(handed.item, a, "C", "", quote="  ")
    assert not Judgment.objects.exists()
    judgment = submit_judgment(handed.item, a, "C", "", quote="two people of that name")
    assert (judgment.answer, judgment.source_url, judgment.quote) == ("C", "", "two people of that name")


@pytest.mark.parametrize("other", ["Y", "N", "C"])
def test_the_item_waits_for_its_judgments_then_goes_to_adjudication(tmp_path, other):
    campaign = star_campaign(tmp_path, items=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    c, = users(campaign, Role.ADJUDICATOR, 1)
    submit_judgment(next_item(campaign, a).item, a, "C", "", quote="the page is ambiguous")
    item = Item.objects.get()
    assert item.status == "in_progress"  # the second answer stays independent
    submit_judgment(next_item(campaign, b).item, b, other, URL, quote="why" if other == "C" else "")
    item.refresh_from_db()
    assert (item.status, item.label) == ("conflict", "")
    handed = next_adjudication(campaign, c)
    assert handed.item_id == item.pk
    evidence = web.adjudication_evidence(item)["evidence"]
    assert (evidence[0]["answer"], evidence[0]["answer_display"], evidence[0]["quote"]) == \
        ("C", "can't tell", "the page is ambiguous")
    with pytest.raises(AnnotationError):
        adjudicate(item, c, "C", "no")
    adjudicate(item, c, "N", "the comment is right: not stated anywhere")
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin) == ("adjudicated", "N", "adjudicated")


def test_the_adjudication_page_shows_the_comment(tmp_path, client):
    campaign = star_campaign(tmp_path, items=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    c, = users(campaign, Role.ADJUDICATOR, 1)
    submit_judgment(next_item(campaign, a).item, a, "C", "", quote="two <b>namesakes</b>")
    submit_judgment(next_item(campaign, b).item, b, "Y", URL)
    client.force_login(c)
    page = client.get(f"/campaigns/{campaign.name}/adjudicate/", follow=True).content.decode()
    assert "Can&#x27;t tell" in page and "<dt>Comment</dt>" in page and "two &lt;b&gt;namesakes&lt;/b&gt;" in page


def test_can_t_tell_on_a_gold_check_is_not_a_pass(tmp_path):
    campaign = star_campaign(tmp_path, items=2)
    a, = users(campaign, Role.ANNOTATOR, 1)
    Item.objects.filter(campaign=campaign).update(is_gold=True, gold_answer="Y")
    for answer in ("Y", "C"):
        submit_judgment(next_item(campaign, a).item, a, answer, URL if answer == "Y" else "", quote="unsure")
    row, = gold_accuracy_by_annotator(campaign)
    assert (row.correct, row.total, row.missed_yes) == (1, 2, 1)
    assert all(i.status == "in_progress" for i in Item.objects.filter(campaign=campaign))  # gold: never decided


def test_consistency_checks_ignore_it(tmp_path):
    from pooling.models import Entity

    campaign = star_campaign(tmp_path, items=2)
    a, = users(campaign, Role.ANNOTATOR, 1)
    kg = campaign.pool.sample.kg
    e = {key: Entity.objects.get(kg=kg, key=key) for key in ("e0", "e1", "e2")}
    first, second = Item.objects.filter(campaign=campaign).order_by("pk")
    # both triples are in train: a "no" to either contradicts the KG (flag kg_states), a can't tell does not
    Item.objects.filter(pk=first.pk).update(head=e["e0"], tail=e["e2"])
    Item.objects.filter(pk=second.pk).update(head=e["e1"], tail=e["e2"])
    for _ in range(2):
        handed = next_item(campaign, a)
        if handed.item_id == first.pk:
            submit_judgment(handed.item, a, "N", "")
        else:
            submit_judgment(handed.item, a, "C", "", quote="no idea")
    assert Item.objects.get(pk=first.pk).flags == ["kg_states:train"]
    assert Item.objects.get(pk=second.pk).flags == []
