"""Judged data cannot be deleted by accident (issue 13): deleting anything judgments hang from (user, KG, entity,
relation, sample, pool, pool entry, campaign, item, a pooled system) is refused by the ORM and by the admin's
delete pages (a clear refusal with counts), while unjudged objects can still be deleted; a judged campaign leaves
only through ``archive_campaign NAME --confirm NAME`` (a verified backup first, which restores it)."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db.models import ProtectedError, RestrictedError
from django.test import Client

from annotation.models import Campaign, Item, Judgment, LabelVersion, Role
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, PoolHit, Question, Relation, Sample, System
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def judged(tmp_path):
    campaign = star_campaign(tmp_path, items=3, name="protect")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for user in (a, b):
        handed = next_item(campaign, user)
        submit_judgment(handed.item, user, "Y", URL)
    item = Item.objects.get(pk=handed.item_id)
    system = System.objects.create(kg=campaign.pool.sample.kg, name="sys", origin="imported", status="ready")
    PoolHit.objects.create(entry=item.entry, system=system, question=Question.objects.filter(sample=campaign.pool.sample).first(), rank=1)
    admin = get_user_model().objects.create_superuser("protect-root", password="pw-root-123")
    client = Client()
    client.force_login(admin)
    return campaign, item, a, system, client


def judged_objects(campaign, item, annotator, system):
    pool = campaign.pool
    return {
        "user": annotator, "kg": pool.sample.kg, "entity": item.head, "relation": item.relation, "sample": pool.sample,
        "pool": pool, "pool entry": item.entry, "campaign": campaign, "item": item, "system": system,
    }


def test_the_orm_refuses_every_delete_that_would_take_judgments(judged):
    campaign, item, annotator, system = judged[:4]
    for name, obj in judged_objects(campaign, item, annotator, system).items():
        with pytest.raises((ProtectedError, RestrictedError)):
            obj.delete()
        assert type(obj).objects.filter(pk=obj.pk).exists(), name
    assert Judgment.objects.count() == 2 and LabelVersion.objects.count() == 2


ADMIN_PAGES = {"kg": "pooling/knowledgegraph", "sample": "pooling/sample", "pool": "pooling/pool",
               "pool entry": "pooling/poolentry", "campaign": "annotation/campaign", "item": "annotation/item",
               "system": "pooling/system"}


def test_the_admin_delete_pages_refuse_with_counts(judged):
    campaign, item, annotator, system, client = judged
    objects = judged_objects(campaign, item, annotator, system)
    for name, page in ADMIN_PAGES.items():
        url = f"/admin/{page}/{objects[name].pk}/delete/"
        text = client.get(url).content.decode()
        assert "Cannot delete" in text, name
        expected = "1 pool hit" if name == "system" else "2 judgments"
        assert expected in text, (name, text[text.find("protected"):][:600])
        client.post(url, {"post": "yes"})
        assert type(objects[name]).objects.filter(pk=objects[name].pk).exists(), name
    campaign_page = client.get(f"/admin/annotation/campaign/{campaign.pk}/delete/").content.decode()
    assert "manage.py archive_campaign NAME --confirm NAME" in campaign_page
    for name, page in (("entity", "pooling/entity"), ("relation", "pooling/relation")):
        assert client.get(f"/admin/{page}/{objects[name].pk}/delete/").status_code == 403


def test_unjudged_objects_can_still_be_deleted(judged, tmp_path):
    client = judged[4]
    other = star_campaign(tmp_path, items=4, name="unjudged")
    pool, kg = other.pool, other.pool.sample.kg
    text = client.get(f"/admin/pooling/pool/{pool.pk}/delete/").content.decode()
    assert "Cannot delete" not in text and "4 pool entries" in text and "4 items" in text
    assert client.post(f"/admin/pooling/pool/{pool.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Pool.objects.filter(pk=pool.pk).exists() and not Campaign.objects.filter(pk=other.pk).exists()
    Sample.objects.filter(kg=kg).delete()
    kg.delete()
    assert not KnowledgeGraph.objects.filter(pk=kg.pk).exists()
    assert not Entity.objects.filter(kg_id=kg.pk).exists() and not Relation.objects.filter(kg_id=kg.pk).exists()


def test_archive_is_the_way_out_for_a_judged_campaign(judged, tmp_path):
    campaign, item, annotator, system, client = judged
    path = tmp_path / "protect.tar.gz"
    with pytest.raises(CommandError, match="confirm with its exact name"):
        call_command("archive_campaign", campaign.name, "--confirm", "protec", "-o", str(path))
    assert Campaign.objects.filter(pk=campaign.pk).exists() and not path.exists()
    out = io.StringIO()
    call_command("archive_campaign", campaign.name, "--confirm", campaign.name, "-o", str(path), stdout=out)
    assert "archived to" in out.getvalue() and "2 Judgment" in out.getvalue()
    assert not Campaign.objects.filter(name=campaign.name).exists() and Judgment.objects.count() == 0
    assert PoolEntry.objects.filter(pool=campaign.pool).exists()  # the pool stays
    call_command("restore_campaign", str(path), stdout=io.StringIO())
    restored = Campaign.objects.get(name=campaign.name)
    assert sorted(Judgment.objects.filter(item__campaign=restored).values_list("user__username", "answer")) == [
        (annotator.username, "Y"), (f"{campaign.name}-annotator1", "Y")]
