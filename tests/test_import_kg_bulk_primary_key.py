"""PostgreSQL's bulk load into an empty triple table drops the primary key with the indexes and writes explicit ids
from a range reserved on the table's sequence (pooling/services/kg_bulk.py); into an empty entity table, its unique
constraints and name index, with explicit ids too. After the import the tables have the same constraints and
indexes as migrations made, the ids are the reserved range in file order, later inserts draw ids above it, and a
table that got rows before the lock keeps everything (the savepoint rolled back, its lock released)."""
from __future__ import annotations

from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection, transaction

from pooling.engine.synthkg import SyntheticKG, write
from pooling.models import Entity, KnowledgeGraph, Relation, Triple
from pooling.services import kg_bulk
from pooling.services.kg_import import import_kg
from tests._pool_support import storage  # noqa: F401

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: COPY and its primary key")]
SPEC = SyntheticKG(triples=2000, entities=300, relations=9, seed=3)


def table_definition(model=Triple) -> tuple[set[str], set[tuple[str, str, str]]]:
    """(index definitions, (constraint name, kind, definition)) of the model's table, from PostgreSQL's catalogs."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [model._meta.db_table])
        indexes = {row[0] for row in cursor.fetchall()}
        cursor.execute("SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
                       "WHERE conrelid = %s::regclass", [model._meta.db_table])
        return indexes, set(cursor.fetchall())


def sequence_value(model=Triple) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT last_value FROM {model._meta.db_table}_id_seq")
        return cursor.fetchone()[0]


def test_an_import_into_the_empty_table_keeps_the_tables_definition_and_numbers_rows_in_file_order(tmp_path, storage):
    write(SPEC, tmp_path / "kg")
    before, entities_before = table_definition(), table_definition(Entity)
    assert ("pooling_triple_pkey", "p", "PRIMARY KEY (id)") in before[1]
    assert ("entity_unique_key", "u", "UNIQUE (kg_id, key)") in entities_before[1]
    kg = import_kg("pk-first", tmp_path / "kg")
    assert table_definition() == before
    assert table_definition(Entity) == entities_before
    # the entities too: one reserved range in index order, the sequence past it
    entity_ids = list(Entity.objects.filter(kg=kg).order_by("index").values_list("id", flat=True))
    assert entity_ids == list(range(entity_ids[0], entity_ids[0] + len(entity_ids)))
    assert sequence_value(Entity) == entity_ids[-1]
    ids = list(Triple.objects.filter(kg=kg).order_by("id").values_list("id", flat=True))
    assert len(ids) == SPEC.triples
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # one reserved range, no gap
    assert sequence_value() == ids[-1]  # the sequence moved past the range
    # file order: train, then valid, then test, each in its lines' order
    splits = list(Triple.objects.filter(kg=kg).order_by("id").values_list("split", flat=True))
    counts = {split: splits.count(split) for split in ("train", "valid", "test")}
    assert splits == ["train"] * counts["train"] + ["valid"] * counts["valid"] + ["test"] * counts["test"]
    first_train = Triple.objects.filter(kg=kg).order_by("id").first()
    line = (tmp_path / "kg" / "train.txt").read_text().splitlines()[0].split("\t")
    assert (first_train.head.key, first_train.relation.key, first_train.tail.key) == tuple(line)
    # a second import finds rows there: indexes kept, ids from the sequence's default, above the first range
    other = import_kg("pk-second", tmp_path / "kg")
    assert table_definition() == before
    assert Triple.objects.filter(kg=other).order_by("id").first().id > ids[-1]
    assert table_definition(Entity) == entities_before
    assert Entity.objects.filter(kg=other).order_by("id").first().id > entity_ids[-1]
    assert Triple.objects.count() == 2 * SPEC.triples


def test_rows_that_appear_before_the_lock_keep_the_indexes_and_release_the_lock(monkeypatch):
    before = table_definition()
    kg = KnowledgeGraph.objects.create(name="pk-rows")  # rows for the stand-in triple to point at (no import:
    entity = Entity.objects.create(kg=kg, index=0, key="e")  # its own lock would be held by the test's transaction)
    relation = Relation.objects.create(kg=kg, index=0, key="r")
    assert not Triple.objects.exists()
    real_drop = kg_bulk._drop_triple_indexes
    seen = []

    def drop_then_find_a_row(cursor):
        dropped = real_drop(cursor)
        seen.append(dropped.primary_key)
        # another import committed its rows between the first look and this lock: the row stands in for them
        cursor.execute("INSERT INTO pooling_triple (kg_id, head_id, relation_id, tail_id, split) "
                       "VALUES (%s, %s, %s, %s, 'train')", [kg.pk, entity.pk, relation.pk, entity.pk])
        return dropped

    monkeypatch.setattr(kg_bulk, "_drop_triple_indexes", drop_then_find_a_row)
    with transaction.atomic():
        assert kg_bulk._indexes_dropped_for_load(10, replacing=False) is None
        assert seen == ["pooling_triple_pkey"]
        assert table_definition() == before  # the savepoint's rollback restored the indexes and the key
        assert not Triple.objects.exists()  # and took the row with it
        # the exclusive lock went with the savepoint: another session reads the table at once
        with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
            other.execute("SET lock_timeout = '1s'")
            other.execute("SELECT count(*) FROM pooling_triple")  # LockNotAvailable after 1 s if still locked


def test_a_role_that_may_not_skip_the_foreign_key_checks_still_loads_and_rebuilds(tmp_path, storage, monkeypatch):
    """Without superuser rights the COPYs queue a deferred foreign-key check per row, and PostgreSQL refuses
    CREATE INDEX on a table with queued trigger events: the checks run first, then the indexes are built."""
    write(SPEC, tmp_path / "kg")
    before, entities_before = table_definition(), table_definition(Entity)

    @contextmanager
    def refused(cursor):
        yield

    monkeypatch.setattr(kg_bulk, "_foreign_key_triggers_skipped", refused)
    kg = import_kg("pk-checked", tmp_path / "kg")
    assert (table_definition(), table_definition(Entity)) == (before, entities_before)
    assert Triple.objects.filter(kg=kg).count() == SPEC.triples
    # the constraints are deferred again (Django's foreign keys are INITIALLY DEFERRED): a dangling reference is
    # refused at the commit, not by the insert itself
    triple = Triple.objects.filter(kg=kg).first()
    with transaction.atomic():
        point = transaction.savepoint()
        Triple.objects.create(kg=kg, head_id=10**9, relation_id=triple.relation_id, tail_id=triple.tail_id, split="train")
        transaction.savepoint_rollback(point)
