"""Undo of one's own answer (issue 15): allowed while nobody else acted on it, refused (and nothing written)
once someone did; the judgment is withdrawn, never overwritten or deleted."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.lib.undo import MESSAGES, OTHERS_ACTED, RECENT_ANSWERS, UndoFacts, undo_refusal
from annotation.models import Assignment, AuditItem, ExpertReview, Item, Judgment, LabelVersion, Role
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.errors import NotAllowed, UndoRefused
from annotation.services.item_state import find_inconsistent_items
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from tests._annotation_support import star_campaign, users

URL = "https://www.wikidata.org/wiki/Q1"
FREE = UndoFacts(recent=True, later_answers_by_others=0, adjudicated=False, adjudication_open=False,
                 expert_reviewed=False, reused_elsewhere=False)


def test_rules_name_each_reason_and_tell_the_annotator_nothing_of_others():
    from dataclasses import replace

    assert undo_refusal(FREE) is None
    cases = {"adjudicated": dict(adjudicated=True), "adjudicating": dict(adjudication_open=True),
             "audit": dict(expert_reviewed=True), "reused": dict(reused_elsewhere=True),
             "answered_after": dict(later_answers_by_others=1), "not_recent": dict(recent=False)}
    for code, change in cases.items():
        assert undo_refusal(replace(FREE, **change)) == code
    # blind judging: a refused undo never says whether an adjudicator (a disagreement) or a second answer stopped it
    assert {MESSAGES[c] for c in ("adjudicated", "adjudicating", "audit", "reused", "answered_after")} == {OTHERS_ACTED}


def _judge(campaign, user, answer="Y", quote=""):
    assignment = next_item(campaign, user)
    return submit_judgment(assignment.item, user, answer, URL, quote=quote)


@pytest.mark.django_db
def test_undo_of_the_first_answer_withdraws_it_and_hands_the_item_back(tmp_path):
    campaign = star_campaign(tmp_path, items=2)
    a, = users(campaign, Role.ANNOTATOR, 1)
    judgment = _judge(campaign, a, "N")
    assignment = undo_judgment(judgment, a)
    judgment = Judgment.all_objects.get(pk=judgment.pk)
    assert judgment.withdrawn_at is not None and judgment.answer == "N" and judgment.assignment_id is None
    assert not Judgment.objects.filter(pk=judgment.pk).exists()  # no longer counts
    assert assignment.state == Assignment.State.OPEN and assignment.item_id == judgment.item_id
    item = Item.objects.get(pk=judgment.item_id)
    assert (item.status, item.num_judgments, item.num_active) == ("in_progress", 0, 1)
    assert next_item(campaign, a).pk == assignment.pk  # the same person gets it again, from the same hand-out
    again = submit_judgment(item, a, "Y", URL)
    assert again.pk != judgment.pk and again.assignment_id == assignment.pk
    rows = Judgment.all_objects.filter(item=item).order_by("pk")
    assert [(j.answer, j.withdrawn_at is None) for j in rows] == [("N", False), ("Y", True)]
    assert find_inconsistent_items(campaign) == []


@pytest.mark.django_db
def test_undo_of_the_deciding_answer_reverts_the_agreement(tmp_path):
    campaign = star_campaign(tmp_path, items=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    _judge(campaign, a, "Y")
    second = _judge(campaign, b, "Y")
    item = Item.objects.get(pk=second.item_id)
    assert (item.status, item.label) == ("agreed", "Y")
    undo_judgment(second, b)
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin, item.num_judgments, item.num_active) == \
        ("in_progress", "", "", 1, 2)
    assert find_inconsistent_items(campaign) == []


@pytest.mark.django_db
def test_refused_after_another_annotator_answered(tmp_path):
    campaign = star_campaign(tmp_path, items=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    first = _judge(campaign, a, "Y")
    _judge(campaign, b, "N")
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(first, a)
    assert refused.value.code == "answered_after" and str(refused.value) == OTHERS_ACTED
    assert Judgment.objects.filter(pk=first.pk).exists()
    assert not LabelVersion.objects.filter(reason=LabelVersion.Reason.UNDO).exists()


@pytest.mark.django_db
def test_refused_while_an_adjudicator_holds_or_after_one_decided(tmp_path):
    campaign = star_campaign(tmp_path, items=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    c, d = users(campaign, Role.ADJUDICATOR, 2)
    _judge(campaign, a, "Y")
    second = _judge(campaign, b, "N")  # the last answer: nobody answered after it
    handed = next_adjudication(campaign, c)
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(second, b)
    assert refused.value.code == "adjudicating"
    Assignment.objects.filter(pk=handed.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    adjudicate(second.item, d, "N", "the source says no")  # c's hand-out lapsed: another decides
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(second, b)
    assert refused.value.code == "adjudicated"


@pytest.mark.django_db
def test_refused_in_the_expert_audit_or_when_another_campaign_reuses_the_label(tmp_path):
    campaign = star_campaign(tmp_path, items=2)
    a, = users(campaign, Role.ANNOTATOR, 1)
    expert, = users(campaign, Role.EXPERT, 1)
    audited, reused = _judge(campaign, a), _judge(campaign, a)
    ExpertReview.objects.create(item=audited.item, expert=expert)
    with pytest.raises(UndoRefused, match="someone else") as refused:
        undo_judgment(audited, a)
    assert refused.value.code == "audit"
    AuditItem.objects.create(campaign=campaign, item=reused.item, position=0, final_label="Y", final_origin="x",
                             drawn_at=timezone.now())
    with pytest.raises(UndoRefused):
        undo_judgment(reused, a)
    AuditItem.objects.all().delete()
    other = star_campaign(tmp_path / "other", items=1, name="other")
    Item.objects.filter(campaign=other).update(reused_from=reused.item)
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(reused, a)
    assert refused.value.code == "reused"


@pytest.mark.django_db
def test_only_your_own_recent_answers_and_only_once(tmp_path):
    campaign = star_campaign(tmp_path, items=RECENT_ANSWERS + 1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    judgments = []
    for n in range(RECENT_ANSWERS + 1):
        assignment = next_item(campaign, a, now=start + timedelta(seconds=n))
        judgments.append(submit_judgment(assignment.item, a, "N", URL, now=start + timedelta(seconds=n, milliseconds=5)))
    with pytest.raises(NotAllowed):
        undo_judgment(judgments[-1], b)
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(judgments[0], a)  # the 21st newest
    assert refused.value.code == "not_recent"
    undo_judgment(judgments[1], a)  # the 20th newest
    with pytest.raises(UndoRefused) as refused:
        undo_judgment(judgments[1], a)
    assert refused.value.code == "undone"
    other = star_campaign(tmp_path / "other", items=1, name="other")
    with pytest.raises(NotAllowed):
        undo_judgment(judgments[2], a, campaign=other)
    assert LabelVersion.objects.filter(reason=LabelVersion.Reason.UNDO).count() == 1


@pytest.mark.django_db
def test_an_undone_gold_answer_counts_no_more(tmp_path):
    from annotation.selectors.gold import gold_accuracy_by_annotator

    campaign = star_campaign(tmp_path, items=1)
    a, = users(campaign, Role.ANNOTATOR, 1)
    Item.objects.filter(campaign=campaign).update(is_gold=True, gold_answer="Y")
    wrong = _judge(campaign, a, "N")
    assert [(r.correct, r.total) for r in gold_accuracy_by_annotator(campaign)] == [(0, 1)]
    undo_judgment(wrong, a)
    assert gold_accuracy_by_annotator(campaign) == []
