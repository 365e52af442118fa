"""Reuse across rounds (issue 8): a deeper pool on the same KG only sends the new triples to people."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Item, Role
from annotation.services.campaigns import create_campaign
from annotation.services.reuse import reused_count
from pooling.models import Entity, Pool, PoolEntry, Relation
from tests._annotation_quality_support import judge_all
from tests._annotation_support import tiny_pool, users

N = 12
TRAIN = [(f"e{i}", "likes", f"e{(i + j) % N}") for i in range(N) for j in (1, 2)]
TEST = [("e0", "likes", "e5")]
DEPTH3 = [("e0", "likes", f"e{k}") for k in (3, 4, 6)] + [("e7", "likes", "e5"), ("e8", "likes", "e5")]
NEW = [("e0", "likes", f"e{k}") for k in (7, 8)] + [("e9", "likes", "e5"), ("e10", "likes", "e5")]


def deeper_pool(pool: Pool) -> Pool:
    kg = pool.sample.kg
    entity = dict(Entity.objects.filter(kg=kg).values_list("key", "pk"))
    relation = dict(Relation.objects.filter(kg=kg).values_list("key", "pk"))
    deeper = Pool.objects.create(sample=pool.sample, name="depth6", depth=6, origin=Pool.Origin.IMPORTED, status=Pool.Status.DONE)
    PoolEntry.objects.bulk_create(
        [PoolEntry(pool=deeper, head_id=entity[h], relation_id=relation[r], tail_id=entity[t], depth=1 if (h, r, t) in DEPTH3 else 5)
         for h, r, t in DEPTH3 + NEW]
    )
    return deeper


@pytest.mark.django_db
def test_deeper_pool_reuses_every_final_label(tmp_path):
    train = [t for t in TRAIN if t not in TEST + DEPTH3 + NEW]
    pool3 = tiny_pool(tmp_path, name="rounds", train=train, test=TEST, entries=DEPTH3)
    first = create_campaign("depth3", pool3)
    assert reused_count(first) == 0
    # one rule label, the rest judged (one conflict adjudicated)
    ruled = Item.objects.get(campaign=first, head__key="e8")
    Item.objects.filter(pk=ruled.pk).update(status=Item.Status.AUTO_NEGATIVE, label="N", label_origin="rule", rule="type")
    a, b = users(first, Role.ANNOTATOR, 2)
    judge_all(first, [a, b], lambda item, user: "N" if item.tail.key == "e4" and user == b else "Y")
    assert Item.objects.filter(campaign=first, status="conflict").count() == 1  # (e0, likes, e4)
    second = create_campaign("depth6", deeper_pool(pool3))
    # the conflict has no final label yet: it goes to people again; the 4 decided triples are reused
    assert reused_count(second) == 4
    pending = set(Item.objects.filter(campaign=second, status="pending").values_list("head__key", "tail__key"))
    assert pending == {(h, t) for h, _r, t in NEW} | {("e0", "e4")}
    reused = Item.objects.filter(campaign=second, label_origin="reused").select_related("reused_from")
    assert {(i.label, i.rule, i.reused_from.campaign_id) for i in reused} == {("Y", "", first.pk), ("N", "type", first.pk)}
    assert all(i.status == Item.Status.IMPORTED for i in reused)
    # reused items are not sent to people
    c, d = users(second, Role.ANNOTATOR, 2)
    received = judge_all(second, [c, d], lambda item, user: "N")
    assert len(received[c.pk]) == len(NEW) + 1
    # the completed set says where each label came from
    out = io.StringIO()
    call_command("export_judgments", "depth6", "--format", "labels-origin", stdout=out, stderr=io.StringIO())
    origins = {tuple(line.split("\t")[:3]): line.split("\t")[4] for line in out.getvalue().splitlines()}
    assert origins[("e8", "likes", "e5")] == "reused:rule:type" and origins[("e0", "likes", "e3")] == "reused"
    assert origins[("e0", "likes", "e7")] == "unanimous" and origins[("e0", "likes", "e5")] == "test"


@pytest.mark.django_db
def test_campaigns_that_disagree_are_not_reused(tmp_path):
    train = [t for t in TRAIN if t not in TEST + DEPTH3 + NEW]
    pool3 = tiny_pool(tmp_path, name="rounds2", train=train, test=TEST, entries=DEPTH3)
    for name, label in (("r1", "Y"), ("r2", "N")):
        campaign = create_campaign(name, pool3, reuse=False)
        Item.objects.filter(campaign=campaign, head__key="e7").update(status="agreed", label=label, label_origin="unanimous")
    third = create_campaign("r3", pool3)
    assert reused_count(third) == 0
    assert Item.objects.get(campaign=third, head__key="e7").status == "pending"
    assert create_campaign("r4", pool3, reuse=False).items.filter(status="pending").count() == len(DEPTH3)
