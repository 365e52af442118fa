"""Consistency flags on PostgreSQL in plain statements (annotation/services/flag_sql.flag_items, issue 21) leave
every item exactly as ``flag_for_adjudication`` (the ORM's path, one call per flag) does: on random, seeded states
(open hand-outs, one or two answers, undone answers, conflicts, adjudications, gold checks, earlier flags)."""
from __future__ import annotations

import random

import pytest
from django.db import connection, transaction

from annotation.models import Item, Role
from annotation.services.adjudication import adjudicate, flag_for_adjudication, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.errors import AnnotationError
from annotation.services.flag_sql import flag_items
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from tests._annotation_support import star_campaign, users

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: flag_sql's statements")]
URL = "https://en.wikipedia.org/wiki/X"
FLAGS = ["single_answer:tail", "single_answer:head", "kg_states:train", "cross_campaign:other"]
STATE = ("flags", "status", "label", "label_origin", "num_judgments", "num_active")


def states(campaign) -> dict[int, tuple]:
    return {row[0]: row[1:] for row in Item.objects.filter(campaign=campaign).order_by("pk").values_list("pk", *STATE)}


def random_states(tmp_path, seed: int):
    rng = random.Random(seed)
    campaign = star_campaign(tmp_path, items=12, name=f"flags{seed}", gold_rate=0.25)
    annotators = users(campaign, Role.ANNOTATOR, 3)
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    for _step in range(22):  # part of the campaign judged: every status occurs
        user = rng.choice(annotators)
        try:
            handed = next_item(campaign, user)
            if handed is not None and rng.random() < 0.8:  # some hand-outs stay open
                judgment = submit_judgment(handed.item, user, rng.choice("YN"), URL)
                if rng.random() < 0.1:
                    undo_judgment(judgment, user, campaign=campaign)
            if rng.random() < 0.2 and (conflict := next_adjudication(campaign, adjudicator)) is not None:
                adjudicate(conflict.item, adjudicator, rng.choice("YN"), "read the sources")
        except AnnotationError:
            pass
        if rng.random() < 0.1:
            flag_for_adjudication(rng.choice(list(Item.objects.filter(campaign=campaign))), rng.choice(FLAGS))
    return campaign, rng


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_flag_items_leaves_the_items_as_flag_for_adjudication_does(tmp_path, seed):
    campaign, rng = random_states(tmp_path, seed)
    start = states(campaign)
    assert len({s[1] for s in start.values()}) >= 3  # several statuses among the items flagged below
    for _round in range(6):
        found = {pk: sorted(rng.sample(FLAGS, rng.randint(1, 2))) for pk in rng.sample(sorted(start), 3)}
        with transaction.atomic():
            point = transaction.savepoint()
            for pk in sorted(found):
                for flag in found[pk]:
                    flag_for_adjudication(Item(pk=pk), flag)
            expected = states(campaign)
            transaction.savepoint_rollback(point)
        assert states(campaign) == start
        flag_items(found)
        assert states(campaign) == expected, found
        assert any(expected[pk] != start[pk] for pk in found)  # the flags changed something
        start = expected


def test_an_item_already_flagged_and_decided_is_not_written(tmp_path):
    campaign, _rng = random_states(tmp_path, 5)
    item = Item.objects.filter(campaign=campaign).order_by("pk").first()
    flag_for_adjudication(item, "kg_states:train")
    before = Item.objects.get(pk=item.pk)
    flag_items({item.pk: ["kg_states:train"]})
    after = Item.objects.get(pk=item.pk)
    assert (after.flags, after.updated_at) == (before.flags, before.updated_at)  # nothing to add, nothing saved
