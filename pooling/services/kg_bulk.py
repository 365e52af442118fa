"""Bulk writes of a knowledge graph's entity and triple rows, at the speed of the database's own loaders.

PostgreSQL: ``COPY ... FROM STDIN`` (psycopg 3), entities as text rows, triples as binary blocks built with
numpy (no Python object per triple). SQLite: ``executemany`` of plain tuples. Both run inside the caller's
transaction, so a failure or Ctrl-C anywhere rolls everything back.

Indexes. Inserting into a table with its five indexes costs about three times the load itself (1 M rows on
PostgreSQL: 13.5 s with them, 1.1 s + 3.6 s of index builds without). The triple indexes are therefore dropped
and built again after the load, in the same transaction (a rollback restores them), where that is safe: on
SQLite when the table holds fewer rows than the import adds (the database is write-locked during the whole
import anyway); on PostgreSQL only when the table is empty, since DROP INDEX holds an ACCESS EXCLUSIVE lock
until the commit, which must never stop the pages and workers reading other KGs' triples. Otherwise COPY
maintains them in place. On PostgreSQL the triple table's primary key goes with them (its index, maintained row
by row, was a third of the COPY), and the rows of a table locked this way get their ids from a range reserved on
its sequence (the default's nextval per row was another sixth): 3 M triples load in 2.4 s instead of 4.2-5.4 s,
plus 0.8 s for the primary key's index built after. The entity table's unique constraints and name index are
dropped and rebuilt the same way when it is empty (its primary key stays: other tables' foreign keys point at
it), and the entities' ids are then known without reading them back.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from django.db import DatabaseError, OperationalError, connection, transaction

from pooling.engine.kgfiles import SPLITS, KGData
from pooling.models import Entity, KnowledgeGraph, Triple

ProgressFn = Callable[[str, int, int], None]

TRIPLE_BLOCK = 200_000  # triples per COPY block / executemany call (and per progress report)
ENTITY_COLUMNS = ("kg_id", "index", "key", "name", "description", "url", "wikidata_id", "types")
TRIPLE_COLUMNS = ("kg_id", "head_id", "relation_id", "tail_id", "split")
_PG_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_PG_BINARY_TRAILER = (-1).to_bytes(2, "big", signed=True)


def _is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def _columns_sql(columns: tuple[str, ...]) -> str:
    return ", ".join(connection.ops.quote_name(column) for column in columns)


def _entity_rows(kg: KnowledgeGraph, data: KGData, first_id: int | None) -> Iterator[tuple]:
    """The entity rows in ENTITY_COLUMNS' order, led by the id ``first_id + index`` when ``first_id`` is given."""
    for index, key in enumerate(data.entity_keys):
        ids = () if first_id is None else (first_id + index,)
        info = data.entities.stored(key)
        if info is None:  # no metadata file names it (most entities of a large synthetic or bare graph)
            yield (*ids, kg.pk, index, key, key, "", "", "", "[]")
            continue
        types = json.dumps(info.types) if info.types else "[]"
        yield (*ids, kg.pk, index, key, info.name, info.description, info.url, info.wikidata_id, types)


def write_entities(kg: KnowledgeGraph, data: KGData, *, replacing: bool = False) -> np.ndarray:
    """Insert the entity rows; returns their primary keys by entity index. ``replacing``: this transaction
    deleted a KG's rows that other sessions still read (PostgreSQL then keeps the indexes)."""
    table = connection.ops.quote_name(Entity._meta.db_table)
    count = len(data.entity_keys)
    if not _is_postgresql():
        with connection.cursor() as cursor:
            placeholders = ", ".join(["?"] * len(ENTITY_COLUMNS))
            connection.connection.cursor().executemany(
                f"INSERT INTO {table} ({_columns_sql(ENTITY_COLUMNS)}) VALUES ({placeholders})",
                _entity_rows(kg, data, None))
            return _primary_keys_read_back(cursor, kg, count)
    # the primary key stays (the triples' and campaigns' foreign keys point at it); the other indexes go
    dropped = _dropped_while_empty(Entity, replacing, _drop_entity_indexes) if count else None
    with connection.cursor() as cursor:
        first_id = _reserved_ids(cursor, Entity, count) if dropped is not None else None
        columns = ENTITY_COLUMNS if first_id is None else ("id", *ENTITY_COLUMNS)
        with _foreign_key_triggers_skipped(cursor), \
                cursor.cursor.copy(f"COPY {table} ({_columns_sql(columns)}) FROM STDIN") as copy:
            for row in _entity_rows(kg, data, first_id):
                copy.write_row(row)
        if dropped is None:
            return _primary_keys_read_back(cursor, kg, count)
    _create_indexes(Entity, dropped)
    return np.arange(first_id, first_id + count, dtype=np.int64)


def _primary_keys_read_back(cursor, kg: KnowledgeGraph, count: int) -> np.ndarray:
    table = connection.ops.quote_name(Entity._meta.db_table)
    cursor.execute(f'SELECT {_columns_sql(("index", "id"))} FROM {table} WHERE "kg_id" = %s', [kg.pk])
    pairs = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
    primary_keys = np.empty(count, dtype=np.int64)
    primary_keys[pairs[:, 0]] = pairs[:, 1]
    return primary_keys


def _binary_block(kg_id: int, split: str, heads: np.ndarray, relations: np.ndarray, tails: np.ndarray,
                  first_id: int | None = None) -> bytes:
    """Rows in PostgreSQL's binary COPY format: per row the field count, then (length, big-endian value).
    ``first_id``: the rows' ids are first_id, first_id + 1, ... (the ``id`` column leads); None: no id column."""
    label = split.encode()
    with_ids = first_id is not None
    id_fields = [("id_len", ">i4"), ("id", ">i8")] if with_ids else []
    row = np.dtype([("fields", ">i2"), *id_fields, ("kg_len", ">i4"), ("kg", ">i8"), ("head_len", ">i4"),
                    ("head", ">i8"), ("relation_len", ">i4"), ("relation", ">i8"), ("tail_len", ">i4"),
                    ("tail", ">i8"), ("split_len", ">i4"), ("split", f"S{len(label)}")])
    block = np.empty(len(heads), dtype=row)
    block["fields"] = len(TRIPLE_COLUMNS) + int(with_ids)
    for name in ("kg_len", "head_len", "relation_len", "tail_len", *(["id_len"] if with_ids else [])):
        block[name] = 8
    if with_ids:
        block["id"] = np.arange(first_id, first_id + len(heads), dtype=np.int64)
    block["kg"], block["head"], block["relation"], block["tail"] = kg_id, heads, relations, tails
    block["split_len"], block["split"] = len(label), label
    return block.tobytes()


@dataclass(frozen=True)
class _Dropped:
    """What the load dropped, to build again after it: the model's indexes and constraints, and the primary key
    (the triple table on PostgreSQL)."""
    primary_key: str | None


class _NotEmpty(Exception):
    """The table got rows between the first look and the lock."""


def _indexes_dropped_for_load(new_rows: int, replacing: bool) -> _Dropped | None:
    """Drop the triple indexes and primary key (to build them after the load, in this transaction) where that is
    safe and pays.

    SQLite: when the table holds fewer rows than the load adds (the database is write-locked for the import
    anyway). PostgreSQL: only when the table holds no row at all (``_dropped_while_empty``)."""
    if _is_postgresql():
        return _dropped_while_empty(Triple, replacing, _drop_triple_indexes)
    table = connection.ops.quote_name(Triple._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")
        if cursor.fetchone()[0] >= new_rows:
            return None
        return _drop_triple_indexes(cursor)


def _dropped_while_empty(model, replacing: bool, drop: Callable[[object], _Dropped]) -> _Dropped | None:
    """PostgreSQL: ``drop`` (the model's indexes) when its table holds no row at all: dropping takes an ACCESS
    EXCLUSIVE lock until the commit, so it is never done to a table other KGs' pages read, and only if that lock
    comes within two seconds; otherwise COPY maintains the indexes in place (about 3x slower). None when not
    dropped."""
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")
        if replacing or cursor.fetchone()[0]:
            return None
        cursor.execute("SHOW lock_timeout")
        previous = cursor.fetchone()[0]
        try:
            # A savepoint: a lock not obtained, or rows another import committed before it was, roll back to it,
            # which restores what was dropped and releases the lock, leaving the transaction usable.
            with transaction.atomic():
                cursor.execute("SET LOCAL lock_timeout = '2s'")
                dropped = drop(cursor)
                cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")  # again, now that no one else may write
                if cursor.fetchone()[0]:
                    raise _NotEmpty
        except (OperationalError, _NotEmpty):
            dropped = None
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])
        return dropped


def _reserved_ids(cursor, model, count: int) -> int:
    """The first of ``count`` consecutive ids taken from ``model``'s table's sequence, for rows written with
    explicit ids. Only while this transaction holds the table's exclusive lock (its indexes dropped): no other
    session inserts a row, so none draws from the sequence in between. Sequences are not transactional: a
    rollback leaves a gap, as any failed insert does."""
    cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [model._meta.db_table, model._meta.pk.column])
    sequence = cursor.fetchone()[0]
    cursor.execute("SELECT nextval(%s)", [sequence])
    first = cursor.fetchone()[0]
    if count > 1:
        cursor.execute("SELECT setval(%s, %s)", [sequence, first + count - 1])
    return first


def write_triples(kg: KnowledgeGraph, splits: dict[str, np.ndarray], entity_pk: np.ndarray,
                  relation_pk: np.ndarray, progress: ProgressFn, *, replacing: bool = False) -> None:
    """Insert every split's triple rows (file order), reporting progress after each block. ``replacing``: this
    transaction deleted a KG's rows that other sessions still read (PostgreSQL then keeps the indexes)."""
    total = sum(len(splits[split]) for split in SPLITS)
    dropped = _indexes_dropped_for_load(total, replacing)
    table = connection.ops.quote_name(Triple._meta.db_table)
    done = 0
    progress("triples", done, total)
    with connection.cursor() as cursor:
        if _is_postgresql():
            # with the table locked (its indexes dropped), explicit ids from a reserved range
            next_id = _reserved_ids(cursor, Triple, total) if dropped is not None and total else None
            columns = ("id", *TRIPLE_COLUMNS) if next_id is not None else TRIPLE_COLUMNS
            sql = f"COPY {table} ({_columns_sql(columns)}) FROM STDIN (FORMAT BINARY)"
            with _foreign_key_triggers_skipped(cursor):
                # One COPY per block: a connection in COPY runs no other statement, and the progress callback may
                # (an upload records its progress in the database; inside one long COPY it waited forever).
                for split, heads, relations, tails in _blocks(splits, entity_pk, relation_pk):
                    with cursor.cursor.copy(sql) as copy:
                        copy.write(_PG_BINARY_HEADER)
                        copy.write(_binary_block(kg.pk, split, heads, relations, tails, next_id))
                        copy.write(_PG_BINARY_TRAILER)
                    if next_id is not None:
                        next_id += len(heads)
                    done += len(heads)
                    progress("triples", done, total)
        else:  # the driver's own cursor: Django's wrapper costs a few microseconds per row here
            sql = f"INSERT INTO {table} ({_columns_sql(TRIPLE_COLUMNS)}) VALUES (?, ?, ?, ?, ?)"
            raw_cursor = connection.connection.cursor()  # sqlite3's plain cursor: no per-row peeking wrapper
            for split, heads, relations, tails in _blocks(splits, entity_pk, relation_pk):
                raw_cursor.executemany(sql, zip(repeat(kg.pk), heads.tolist(), relations.tolist(), tails.tolist(),
                                            repeat(split)))
                done += len(heads)
                progress("triples", done, total)
    if dropped is not None:
        progress("indexes", 0, 1)
        _create_indexes(Triple, dropped)
        progress("indexes", 1, 1)


def _blocks(splits: dict[str, np.ndarray], entity_pk: np.ndarray,
            relation_pk: np.ndarray) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    for split in SPLITS:
        triples = splits[split]
        for start in range(0, len(triples), TRIPLE_BLOCK):
            block = triples[start:start + TRIPLE_BLOCK]
            yield split, entity_pk[block[:, 0]], relation_pk[block[:, 1]], entity_pk[block[:, 2]]


@contextmanager
def _foreign_key_triggers_skipped(cursor) -> Iterator[None]:
    """PostgreSQL checks each triple's four foreign keys with a trigger per row, queued to the commit (deferred):
    more than half the load. The rows written here point at rows this transaction wrote just before, which no
    other transaction can see or delete, so where the role may (superuser, or granted SET on the parameter) the
    checks are skipped for the COPY only, and for this transaction only; otherwise they run."""
    try:
        with transaction.atomic():  # a savepoint: a refused SET leaves the transaction usable
            cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        yield
        return
    yield  # on an exception the transaction rolls back, and the SET LOCAL with it
    cursor.execute("SET LOCAL session_replication_role = origin")


@contextmanager
def _deferred_checks_run_now(cursor) -> Iterator[None]:
    """PostgreSQL refuses CREATE INDEX on a table with queued trigger events: the deferred foreign-key checks of
    the rows just loaded where the role could not skip them (``_foreign_key_triggers_skipped``). They run first
    (as the commit would have run them), and the constraints are deferred again after."""
    if not _is_postgresql():
        yield
        return
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def _drop_triple_indexes(cursor) -> _Dropped:
    _drop_indexes(cursor, Triple)
    if not _is_postgresql():  # SQLite's integer primary key is the rowid itself: no index of its own
        return _Dropped(primary_key=None)
    constraints = connection.introspection.get_constraints(cursor, Triple._meta.db_table)
    primary_key = next(name for name, info in constraints.items() if info["primary_key"])
    cursor.execute(f"ALTER TABLE {connection.ops.quote_name(Triple._meta.db_table)} "
                   f"DROP CONSTRAINT {connection.ops.quote_name(primary_key)}")
    return _Dropped(primary_key=primary_key)


def _drop_entity_indexes(cursor) -> _Dropped:
    _drop_indexes(cursor, Entity)
    return _Dropped(primary_key=None)


def _drop_indexes(cursor, model) -> None:
    """The model's indexes, and on PostgreSQL its constraints (each unique one an index of its own; SQLite keeps
    unique constraints in the table's definition, which only a copy of the table could change)."""
    editor = connection.schema_editor()  # only to render the statements; not entered (no DDL transaction of its own)
    for index in model._meta.indexes:
        cursor.execute(f"DROP INDEX {connection.ops.quote_name(index.name)}")
    for constraint in _table_constraints(model):
        cursor.execute(str(constraint.remove_sql(model, editor)))


def _table_constraints(model) -> list:
    return list(model._meta.constraints) if _is_postgresql() else []


def _create_indexes(model, dropped: _Dropped) -> None:
    editor = connection.schema_editor()
    with connection.cursor() as cursor, _deferred_checks_run_now(cursor):
        if dropped.primary_key is not None:  # under its own name again
            table = connection.ops.quote_name(model._meta.db_table)
            name = connection.ops.quote_name(dropped.primary_key)
            cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} "
                           f"PRIMARY KEY ({connection.ops.quote_name(model._meta.pk.column)})")
        for index in model._meta.indexes:
            cursor.execute(str(index.create_sql(model, editor)))
        for constraint in _table_constraints(model):
            cursor.execute(str(constraint.create_sql(model, editor)))
