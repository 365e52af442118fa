"""Every operation leaves each item's stored state equal to the one derived from scratch (issue 13): random,
seeded sequences of hand-outs, answers, skips, expiries, adjudications, consistency flags, admin corrections and
user deactivations, checked after each step by find_inconsistent_items; and a corrupted item is found and repaired
(repair_items)."""
from __future__ import annotations

import io
import random
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Adjudication, Assignment, Item, Judgment, LabelVersion, Role
from annotation.services.adjudication import adjudicate, flag_for_adjudication, next_adjudication
from annotation.services.distribution import next_item, release_expired, skip_item
from annotation.services.errors import AnnotationError
from annotation.services.item_state import find_inconsistent_items, repair_items
from annotation.services.judging import submit_judgment
from annotation.services.label_edits import edit_adjudication, edit_judgment
from annotation.services.users import deactivate_user
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_operations_keep_every_item_consistent(tmp_path, seed):
    rng = random.Random(seed)
    campaign = star_campaign(tmp_path, items=6, name=f"ops{seed}", assignment_timeout_s=60)
    annotators = users(campaign, Role.ANNOTATOR, 4)
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    (admin,) = users(campaign, Role.ADMIN, 1)
    now = timezone.now()
    done = []
    for step in range(80):
        now += timedelta(seconds=rng.choice([1, 2, 5, 5, 90]))  # some hand-outs expire
        user = rng.choice([a for a in annotators if a.is_active] or annotators)
        operation = rng.choices(["next", "submit", "skip", "release", "adjudicate", "flag", "edit",
                                 "edit_adjudication"], weights=[6, 6, 1, 1, 2, 1, 1, 1])[0]
        if step == 50:  # an annotator leaves while holding work
            operation = "deactivate"
            holder = Assignment.objects.filter(item__campaign=campaign, state="open", kind="judge").order_by("pk").first()
            user = next((a for a in annotators if holder and a.pk == holder.user_id), annotators[0])
        try:
            if operation == "next" and user.is_active:
                next_item(campaign, user, now=now)
            elif operation == "submit":  # any open hand-out, by its holder
                handed = rng.choice(list(Assignment.objects.filter(item__campaign=campaign, state="open", kind="judge")
                                         .order_by("pk")) or [None])
                if handed:
                    submit_judgment(handed.item, handed.user, rng.choice("YN"), URL, now=now)
            elif operation == "skip":
                handed = user.assignments.filter(state="open", kind="judge").order_by("pk").first()
                if handed:
                    skip_item(handed.item, user, now=now)
            elif operation == "release":
                release_expired(campaign, now=now)
            elif operation == "adjudicate":
                handed = next_adjudication(campaign, adjudicator, now=now)
                if handed:
                    adjudicate(handed.item, adjudicator, rng.choice("YN"), "read the sources", now=now)
            elif operation == "flag":
                flag_for_adjudication(rng.choice(list(Item.objects.filter(campaign=campaign).order_by("pk"))),
                                      "kg_states:train")
            elif operation == "edit" and Judgment.objects.filter(item__campaign=campaign).exists():
                judgment = rng.choice(list(Judgment.objects.filter(item__campaign=campaign).order_by("pk")))
                edit_judgment(judgment, by=admin, note="correction", answer=rng.choice("YN"), now=now)
            elif operation == "edit_adjudication" and Adjudication.objects.filter(item__campaign=campaign).exists():
                decision = rng.choice(list(Adjudication.objects.filter(item__campaign=campaign).order_by("pk")))
                edit_adjudication(decision, by=admin, note="correction", label=rng.choice("YN"), now=now)
            elif operation == "deactivate":
                deactivate_user(user, now=now)
        except AnnotationError:
            pass  # refused operations write nothing
        done.append(operation)
        mismatches = find_inconsistent_items(campaign)
        assert mismatches == [], (step, operation, [m.describe() for m in mismatches])
    assert {"submit", "adjudicate", "edit", "deactivate"} <= set(done)
    statuses = set(Item.objects.filter(campaign=campaign).values_list("status", flat=True))
    assert statuses & {"agreed", "conflict", "adjudicated"}
    # the sequence did exercise the paths that change decided items
    assert Adjudication.objects.filter(item__campaign=campaign).exists()
    assert LabelVersion.objects.filter(item__campaign=campaign, reason="admin_edit").exists()
    assert any(not a.is_active for a in annotators)


def test_a_corrupted_item_is_found_and_repaired(tmp_path):
    campaign = star_campaign(tmp_path, items=3, name="corrupt")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for user in (a, b):
        handed = next_item(campaign, user)
        submit_judgment(handed.item, user, "Y", URL)
    item = handed.item
    # as the user deletion of issue 13 left it: one judgment gone, the item still "agreed" with two
    Item.objects.filter(pk=item.pk).update(num_active=3, label="N")
    found = find_inconsistent_items(campaign)
    assert [m.item_id for m in found] == [item.pk]
    assert found[0].describe() == f"item {item.pk}: label 'N' -> 'Y', num_active 3 -> 2"
    out = io.StringIO()
    call_command("repair_items", campaign.name, "--dry-run", stdout=out)
    assert "corrupt: 1 item(s) differ" in out.getvalue()
    assert Item.objects.get(pk=item.pk).label == "N"
    assert len(repair_items(campaign)) == 1
    item.refresh_from_db()
    assert (item.status, item.label, item.num_judgments, item.num_active) == ("agreed", "Y", 2, 2)
    assert find_inconsistent_items(campaign) == []


def test_decisions_stored_on_items_agree_with_the_derivation(tmp_path):
    """The bulk paths that label untouched items (import, reuse, revert) leave states the derivation keeps."""
    from annotation.services.campaigns import create_campaign
    from annotation.services.filtering import revert_auto_labels
    from annotation.services.imports import import_judgments

    campaign = star_campaign(tmp_path, items=4, name="stored")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    items = list(Item.objects.filter(campaign=campaign).select_related("head", "relation", "tail").order_by("pk"))
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{i.head.key}\t{i.relation.key}\t{i.tail.key}\tN\n" for i in items[:2]), encoding="utf-8")
    assert import_judgments(campaign, labels).labelled == 2
    Item.objects.filter(pk=items[2].pk).update(status="auto_negative", label="N", label_origin="rule", rule="type")
    for user in (a, b):
        handed = next_item(campaign, user)
        submit_judgment(handed.item, user, "Y", URL)
    assert find_inconsistent_items(campaign) == []
    later = create_campaign("stored-again", campaign.pool)  # reuses the final labels of "stored"
    assert set(Item.objects.filter(campaign=later).values_list("status", flat=True)) == {"imported"}
    assert find_inconsistent_items(later) == []
    assert revert_auto_labels(campaign).sent_back == 1
    assert find_inconsistent_items(campaign) == []
