"""The bulk import path (COPY on PostgreSQL, executemany on SQLite, numpy reader): a seeded synthetic KG
imports to exactly the rows and arrays read off its files by plain Python, whichever reader runs; a failure or
Ctrl-C in the middle of the triple load leaves nothing (no rows, no npz) and the triple indexes in place."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from pooling.engine.synthkg import SyntheticKG, write
from pooling.models import Entity, KnowledgeGraph, Relation, Triple
from pooling.services import kg_bulk
from pooling.services.kg_import import import_kg
from pooling.storage import load_arrays
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db
SPLITS = ("train", "valid", "test")
SPEC = SyntheticKG(triples=3000, entities=400, relations=12, seed=7)


def reference(folder: Path) -> tuple[list[str], list[str], dict[str, list[tuple[str, str, str]]]]:
    """Independent reading: sorted keys, and each split's distinct triples in order of first appearance."""
    splits = {}
    for split in SPLITS:
        seen: dict[tuple[str, str, str], None] = {}
        for line in (folder / f"{split}.txt").read_text().splitlines():
            head, relation, tail = line.split("\t")
            seen.setdefault((head, relation, tail), None)
        splits[split] = list(seen)
    triples = [t for rows in splits.values() for t in rows]
    return sorted({t[0] for t in triples} | {t[2] for t in triples}), sorted({t[1] for t in triples}), splits


def assert_imported_as(kg: KnowledgeGraph, folder: Path) -> None:
    entity_keys, relation_keys, splits = reference(folder)
    assert list(Entity.objects.filter(kg=kg).order_by("index").values_list("key", flat=True)) == entity_keys
    assert list(Relation.objects.filter(kg=kg).order_by("index").values_list("key", flat=True)) == relation_keys
    stored = sorted(Triple.objects.filter(kg=kg).values_list("head__key", "relation__key", "tail__key", "split"))
    assert stored == sorted((h, r, t, split) for split, rows in splits.items() for h, r, t in rows)
    arrays = load_arrays(kg.arrays_file)
    for split, rows in splits.items():
        expected = np.array([(entity_keys.index(h), relation_keys.index(r), entity_keys.index(t)) for h, r, t in rows],
                            dtype=np.int64)
        assert arrays[split].dtype == np.int64
        np.testing.assert_array_equal(arrays[split], expected)


def test_generator_is_seeded_power_law_and_distinct(tmp_path):
    write(SPEC, tmp_path / "a")
    write(SPEC, tmp_path / "b")
    for split in SPLITS:
        assert (tmp_path / "a" / f"{split}.txt").read_bytes() == (tmp_path / "b" / f"{split}.txt").read_bytes()
    _entities, _relations, splits = reference(tmp_path / "a")
    lines = sum(len((tmp_path / "a" / f"{split}.txt").read_text().splitlines()) for split in SPLITS)
    triples = [t for rows in splits.values() for t in rows]
    assert len(triples) == lines == SPEC.triples  # no repeated triple
    assert all(h != t for h, _r, t in triples)
    degree: dict[str, int] = {}
    for h, _r, t in triples:
        degree[h] = degree.get(h, 0) + 1
        degree[t] = degree.get(t, 0) + 1
    ranked = sorted(degree.values(), reverse=True)
    # Zipf: the top 1% of entities carry far more than 1% of the endpoints (uniform would give ~1%).
    assert sum(ranked[: len(ranked) // 100]) > 0.1 * sum(ranked)


def test_generated_kg_imports_identically_through_both_readers(tmp_path, storage):
    write(SPEC, tmp_path / "lf")
    kg = import_kg("bulk-lf", tmp_path / "lf")
    assert_imported_as(kg, tmp_path / "lf")
    if connection.vendor == "postgresql":  # the foreign-key triggers skipped for the COPY are back on after it
        with connection.cursor() as cursor:
            cursor.execute("SHOW session_replication_role")
            assert cursor.fetchone()[0] == "origin"
    # CRLF and a repeated line send the files through the line-by-line reader: same rows, same arrays.
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    for split in SPLITS:
        lines = (tmp_path / "lf" / f"{split}.txt").read_text().splitlines()
        (crlf / f"{split}.txt").write_bytes(("\r\n".join(lines + lines[:1]) + "\r\n").encode())
    other = import_kg("bulk-crlf", crlf)
    assert_imported_as(other, tmp_path / "lf")
    for split in SPLITS:
        np.testing.assert_array_equal(load_arrays(other.arrays_file)[split], load_arrays(kg.arrays_file)[split])


def triple_index_names() -> set[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Triple._meta.db_table)
    return {name for name, info in constraints.items() if info["index"]}


@pytest.mark.parametrize("interruption", [RuntimeError, KeyboardInterrupt])
def test_failure_in_the_middle_of_the_triple_load_leaves_nothing(tmp_path, storage, monkeypatch, interruption):
    write(SPEC, tmp_path / "kg")
    monkeypatch.setattr(kg_bulk, "TRIPLE_BLOCK", 500)
    indexes_before = triple_index_names()
    assert {index.name for index in Triple._meta.indexes} <= indexes_before
    blocks = []

    def fail_in_the_middle(stage: str, done: int, total: int) -> None:
        if stage == "triples" and 0 < done < total:
            blocks.append(done)
            if len(blocks) == 2:  # two blocks written, more to come: inside the COPY on PostgreSQL
                raise interruption("stop")

    with pytest.raises(interruption):
        import_kg("bulk-half", tmp_path / "kg", progress=fail_in_the_middle)
    assert blocks == [500, 1000]
    assert not KnowledgeGraph.objects.filter(name="bulk-half").exists()
    assert (Entity.objects.count(), Relation.objects.count(), Triple.objects.count()) == (0, 0, 0)
    assert not any(path.is_file() for path in Path(storage).rglob("*"))
    assert triple_index_names() == indexes_before
    # and the same files then import whole
    assert_imported_as(import_kg("bulk-half", tmp_path / "kg"), tmp_path / "kg")
    assert triple_index_names() == indexes_before


def test_the_progress_callback_may_use_the_database_between_blocks(tmp_path, storage, monkeypatch):
    """An upload records its progress in the database from this callback (pooling/services/uploads.py): on
    PostgreSQL a callback run inside a COPY waited forever for the busy connection (seen in CI). The callback runs
    between statements and its query answers."""
    write(SPEC, tmp_path / "kg")
    monkeypatch.setattr(kg_bulk, "TRIPLE_BLOCK", 700)
    seen = []

    def query_the_database(stage: str, done: int, total: int) -> None:
        if stage != "triples":
            return
        if connection.vendor == "postgresql":  # psycopg: ACTIVE while a command (a COPY) is under way
            from psycopg.pq import TransactionStatus

            assert connection.connection.info.transaction_status != TransactionStatus.ACTIVE, "inside a COPY"
        seen.append((done, Triple.objects.filter(kg__name="bulk-progress").count()))

    kg = import_kg("bulk-progress", tmp_path / "kg", progress=query_the_database)
    total = Triple.objects.filter(kg=kg).count()
    assert seen[0] == (0, 0) and seen[-1] == (total, total)
    assert [rows for _done, rows in seen] == [done for done, _rows in seen]  # the rows written so far, every time
