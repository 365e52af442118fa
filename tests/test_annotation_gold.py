"""Gold checks from the KG (issue 8): drawn at the set rate, hidden in every annotator's queue, scored with a
Wilson interval, never exported nor counted in agreement."""
from __future__ import annotations

import copy
import io

import numpy as np
import pytest

from annotation.lib.agreement import wilson_interval
from annotation.lib.rules import SINGLE_ANSWER
from annotation.lib.type_rule import type_rule
from annotation.models import Assignment, Item, Label, Role
from annotation.selectors.filtering import kg_categories, kg_type_model
from annotation.selectors.gold import gold_accuracy_by_annotator, gold_warnings
from annotation.selectors.quality import agreement_with_ci
from annotation.selectors.templates import item_question
from annotation.services.exports import export_judgments
from annotation.services.gold import add_gold_items
from pooling.models import Triple
from tests._annotation_quality_support import gold_campaign, judge_all
from tests._annotation_support import users


@pytest.mark.django_db
def test_gold_drawn_at_the_rate_from_the_kg(tmp_path):
    campaign = gold_campaign(tmp_path, items=100, gold_rate=0.1)
    report = add_gold_items(campaign, seed=3)
    assert (report.human_items, report.target, report.yes, report.no, report.added) == (100, 10, 5, 5, 10)
    gold = list(Item.objects.filter(campaign=campaign, is_gold=True).select_related("relation"))
    kg = campaign.pool.sample.kg
    stated = {(h, r, t): s for h, r, t, s in Triple.objects.filter(kg=kg).values_list("head_id", "relation_id", "tail_id", "split")}
    categories, table = kg_categories(kg), kg_type_model(kg)
    for item in gold:
        assert item.entry_id is None and item.status == Item.Status.PENDING and not item.label
        triple = (item.head_id, item.relation_id, item.tail_id)
        if item.gold_answer == Label.YES:
            assert stated.get(triple) == "train"
        else:
            assert triple not in stated
            # ruled out: a type violation, or a second answer to a single-answer question
            indices = np.array([[item.head.index, item.relation.index, item.tail.index]])
            single = categories[item.relation.index] in SINGLE_ANSWER[0] + SINGLE_ANSWER[1]
            assert single or type_rule(indices, table)[0]
    keys = lambda c: sorted(Item.objects.filter(campaign=c, is_gold=True).values_list("head__key", "relation__key", "tail__key", "gold_answer"))  # noqa: E731
    drawn = keys(campaign)
    # idempotent, seeded, and it trims surplus nobody was handed
    assert add_gold_items(campaign, seed=3).added == 0
    campaign.gold_rate = 0.04
    campaign.save()
    trimmed = add_gold_items(campaign)
    assert (trimmed.removed, trimmed.yes, trimmed.no) == (6, 2, 2)
    other = gold_campaign(tmp_path / "again", items=100, name="gold2", gold_rate=0.1)
    add_gold_items(other, seed=3)
    assert keys(other) == drawn  # same KG shape, same seed: the same draw
    rule_labelled = Item.objects.filter(campaign=campaign, is_gold=False)[:50]
    Item.objects.filter(pk__in=[i.pk for i in rule_labelled]).update(status=Item.Status.AUTO_NEGATIVE, label="N", label_origin="rule", rule="type")
    campaign.gold_rate = 0.1
    campaign.save()
    assert add_gold_items(campaign).target == 5  # only items people judge count


@pytest.mark.django_db
def test_every_annotator_gets_every_gold_check_at_about_the_rate_and_blind(tmp_path):
    campaign = gold_campaign(tmp_path, items=100, gold_rate=0.1)
    add_gold_items(campaign, seed=1)
    gold = set(Item.objects.filter(campaign=campaign, is_gold=True).values_list("pk", flat=True))
    annotators = users(campaign, Role.ANNOTATOR, 3)
    received = judge_all(campaign, annotators, lambda item, user: "Y")
    for user in annotators:
        mine = received[user.pk]
        assert gold <= set(mine)  # served to everyone, not capped at two
        share = len(gold & set(mine)) / len(mine)
        assert 0.07 < share < 0.2, share  # ~ 10 of (200 / 3 + 10)
        # spread through the work, not bunched at one end
        first_half = mine[: len(mine) // 2]
        assert 2 <= len(gold & set(first_half)) <= 8
    # every human item still got exactly two judgments
    assert set(Item.objects.filter(campaign=campaign, is_gold=False).values_list("num_judgments", flat=True)) == {2}
    # gold never decided: still in the queue states, no final label
    assert set(Item.objects.filter(campaign=campaign, is_gold=True).values_list("status", "label")) == {("in_progress", "")}
    assert set(Item.objects.filter(campaign=campaign, is_gold=True).values_list("num_judgments", flat=True)) == {3}


@pytest.mark.django_db
def test_what_the_annotator_receives_does_not_tell_gold_apart(tmp_path):
    campaign = gold_campaign(tmp_path, items=40, gold_rate=0.25)
    add_gold_items(campaign, seed=2)
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    seen = []
    while (assignment := next_item_of(campaign, a)) is not None:
        item = assignment.item
        question = item_question(item)
        seen.append((item.is_gold, assignment, question))
        Assignment.objects.filter(pk=assignment.pk).update(state=Assignment.State.DONE)
    gold_rows = [row for row in seen if row[0]]
    other_rows = [row for row in seen if not row[0]]
    assert len(gold_rows) == 10 and len(other_rows) == 40
    # the hand-out carries the same things with the same timing for both
    for _g, assignment, question in seen:
        assert assignment.kind == "judge" and assignment.state == "open"
        assert (assignment.expires_at - assignment.handed_out_at).total_seconds() == campaign.assignment_timeout_s
        assert question.startswith("Is ") or "?" in question
    # the question reads like any other (same template per relation, names only)
    for _g, assignment, question in gold_rows:
        twin = copy.copy(assignment.item)  # the same triple as an ordinary item reads exactly the same
        twin.is_gold, twin.gold_answer = False, ""
        assert question == item_question(twin) and "gold" not in question.lower()
        head, tail = twin.head.name or twin.head.key, twin.tail.name or twin.tail.key
        assert head in question and tail in question
    # queue keys drawn from the same range: the order gives nothing away
    keys = Item.objects.filter(campaign=campaign).values_list("is_gold", "queue_key")
    assert max(k for g, k in keys if g) > 2**29 and min(k for g, k in keys if g) < 2**31 - 2**29


def next_item_of(campaign, user):
    from annotation.services.distribution import next_item

    return next_item(campaign, user)


@pytest.mark.django_db
def test_gold_accuracy_with_wilson_interval_and_warning(tmp_path):
    campaign = gold_campaign(tmp_path, items=40, gold_rate=0.25, name="acc")
    add_gold_items(campaign, seed=5)
    good, sloppy = users(campaign, Role.ANNOTATOR, 2)

    def answer(item, user):
        if item.is_gold:
            return item.gold_answer if user == good else "Y"
        return "Y"

    judge_all(campaign, [good, sloppy], answer)
    rows = {r.username: r for r in gold_accuracy_by_annotator(campaign)}
    assert (rows[good.username].correct, rows[good.username].total) == (10, 10)
    assert (rows[sloppy.username].correct, rows[sloppy.username].total, rows[sloppy.username].missed_no) == (5, 10, 5)
    assert rows[sloppy.username].accuracy == wilson_interval(5, 10)
    assert [r.username for r in gold_warnings(campaign)] == [sloppy.username]  # default threshold 0.8
    assert gold_warnings(campaign, threshold=0.4) == []
    # gold answers never reach the exported labels nor the agreement statistics, even a gold item with a final
    # label (one made gold after it was agreed)
    Item.objects.filter(campaign=campaign, is_gold=True).update(status=Item.Status.AGREED, label="N")
    out = io.StringIO()
    export_judgments(campaign, "labels", out)
    gold_keys = set(Item.objects.filter(campaign=campaign, is_gold=True).values_list("head__key", "tail__key"))
    assert not {(line.split("\t")[0], line.split("\t")[2]) for line in out.getvalue().splitlines()} & gold_keys
    (overall,) = agreement_with_ci(campaign, samples=50)
    assert overall.items == 40
