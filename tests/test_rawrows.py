"""kgpool/rawrows.from_row: the instance a plain cursor's row gives equals the ORM's, behaves as a saved row, and is
only built without ``Model.__init__`` for models no pre_init / post_init receiver listens to."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation.models import Assignment, Campaign, Item, Judgment
from annotation.services.distribution import next_item
from annotation.services.submit_sql import _LOADED
from kgpool.rawrows import columns, from_row, width
from pooling.models import Entity, KnowledgeGraph, Pool, Relation, Sample
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

#: every model the judging API's plain statements load with from_row
LOADED = (*_LOADED, Assignment, Entity, Relation, get_user_model(), Token)


def raw(model, pk):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns(model, 't')} FROM {model._meta.db_table} t WHERE t.{model._meta.pk.column} = %s", [pk])
        return from_row(connection, model, cursor.fetchone())


def values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: from_row converts its rows")
def test_instances_equal_the_orm_rows_and_save_as_updates(tmp_path):
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "ann", "annotator")
    Token.objects.create(user=user)
    hand_out = next_item(campaign, user)
    rows = {Campaign: campaign.pk, Item: hand_out.item_id, Pool: campaign.pool_id, Sample: campaign.pool.sample_id,
            KnowledgeGraph: campaign.pool.sample.kg_id, Assignment: hand_out.pk, Entity: hand_out.item.head_id,
            Relation: hand_out.item.relation_id, get_user_model(): user.pk, Token: user.auth_token.pk}
    assert set(rows) == set(LOADED)
    for model, pk in rows.items():
        instance, reference = raw(model, pk), model.objects.get(pk=pk)
        assert type(instance) is model and instance.pk == reference.pk
        assert values(instance) == values(reference), model
        assert (instance._state.adding, instance._state.db) == (False, "default")
    item = raw(Item, hand_out.item_id)
    assert item.campaign.name == campaign.name and item.head.name == "Jeremy Irons"  # relations load lazily
    item.flags = ["checked"]
    item.save(update_fields=["flags"])  # an UPDATE of the row, not an INSERT
    assert Item.objects.get(pk=item.pk).flags == ["checked"] and Item.objects.count() == 3
    assert values(raw(Campaign, campaign.pk))["allowed_domains"] == campaign.allowed_domains  # JSON converted


def test_models_with_init_receivers_go_through_init():
    """from_row skips Model.__init__ only where no receiver would miss its signal."""
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance)

    assert not any(post_init.has_listeners(model) for model in (*LOADED, Judgment))
    post_init.connect(receiver, sender=Relation)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")  # a connection for from_row's alias
        relation = from_row(connection, Relation, (7, 3, 2, "nat", "nationality", "", "", ""))
    finally:
        post_init.disconnect(receiver, sender=Relation)
    assert seen == [relation] and (relation.pk, relation.kg_id, relation.key) == (7, 3, "nat")


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: from_row converts its rows")
def test_left_out_fields_are_deferred_and_load_when_read(tmp_path):
    campaign = nationality_campaign(tmp_path)
    kg = campaign.pool.sample.kg
    KnowledgeGraph.objects.filter(pk=kg.pk).update(type_labels={"/m/x": "person"}, description="the KG")
    leave_out = frozenset({"type_labels", "description"})
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns(KnowledgeGraph, 't', leave_out)} FROM {KnowledgeGraph._meta.db_table} t "
                       f"WHERE t.id = %s", [kg.pk])
        row = cursor.fetchone()
    assert len(row) == width(KnowledgeGraph, leave_out) == len(KnowledgeGraph._meta.concrete_fields) - 2
    instance = from_row(connection, KnowledgeGraph, row, leave_out)
    assert instance.get_deferred_fields() == leave_out
    reference = KnowledgeGraph.objects.get(pk=kg.pk)
    with CaptureQueriesContext(connection) as queries:
        assert values(instance) == values(reference)  # reading the left-out fields loads them
    assert 1 <= len(queries) <= 2 and not instance.get_deferred_fields()
    assert instance.type_labels == {"/m/x": "person"} and instance.description == "the KG"
    with pytest.raises(ValueError):
        columns(KnowledgeGraph, "t", frozenset({"id"}))  # the primary key stays
    with pytest.raises(ValueError):
        columns(KnowledgeGraph, "t", frozenset({"no_such_field"}))
