"""Writes of the pooling app: importing knowledge graphs."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np
from django.db import IntegrityError, connection, transaction

from pooling.engine.kgfiles import FieldLimits, KGData, MetadataFiles, read_kg
from pooling.models import Entity, KnowledgeGraph, Relation, Triple
from pooling.services.planner_stats import refresh_planner_statistics
from pooling.services.kg_bulk import write_entities, write_triples
from pooling.services.names import checked_name, fit
from pooling.storage import remove_file, save_arrays, storage_path

# (stage, done, total): lets a command draw a progress bar without the service knowing about terminals.
ProgressFn = Callable[[str, int, int], None]


class KGImportError(Exception):
    """The import was refused; nothing was written."""


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def import_kg(
    name: str,
    folder: Path | str,
    *,
    files: MetadataFiles | None = None,
    replace: bool = False,
    description: str = "",
    progress: ProgressFn = _no_progress,
    notes: list[str] | None = None,
) -> KnowledgeGraph:
    """Parse the dataset folder, then write it in one transaction (all or nothing). ``notes`` receives what the
    import did to the files that their user should know (repeated triples left out, test triples also in train)."""
    checked_name("knowledge graph", name, KGImportError)
    existing = KnowledgeGraph.objects.filter(name=name).first()
    if existing is not None and not replace:
        raise KGImportError(f"a knowledge graph named {name!r} already exists (use --replace to overwrite it)")
    if existing is not None:
        _refuse_replacing_used_kg(existing)
    progress("reading files", 0, 1)
    data = read_kg(folder, files, _database_limits())
    progress("reading files", 1, 1)
    if notes is not None:
        notes += data_notes(data)
    written: list[str] = []
    try:
        # SQLite checks each triple's four foreign keys row by row (half the load time); the rows written here
        # point at rows written just before, in the same transaction that holds the database's write lock, so
        # the checks are switched off for it. A no-op on PostgreSQL and inside an outer transaction.
        with connection.constraint_checks_disabled(), transaction.atomic():
            if existing is not None:
                _delete_kg(existing)
            kg = _write_kg(name, fit(str(Path(folder).resolve()), "KnowledgeGraph", "source"), description, data,
                           progress, written, replacing=existing is not None)
    except BaseException as exc:  # failed or interrupted (Ctrl-C): the arrays file of the rolled-back rows goes too
        kg, rolled_back = _outcome(name, written)
        if kg is None:
            if rolled_back:
                for relative in written:
                    remove_file(relative)
            if isinstance(exc, IntegrityError) and KnowledgeGraph.objects.filter(name=name).exists():
                # another import of the same name committed first (two commands started together): one line
                raise KGImportError(f"a knowledge graph named {name!r} was imported by another command while this "
                                    "one ran (use --replace to overwrite it)") from None
            raise
        # Interrupted after the COMMIT (SQLite turning its checks back on, the clean-up below): the import is
        # done, its file stays with its rows, and it finishes as if the interrupt had come a moment later.
    if existing is not None and existing.arrays_file:  # the replaced KG's folder (its arrays, cached statistics)
        old_folder = storage_path(existing.arrays_file).parent
        if old_folder != storage_path(kg.arrays_file).parent:
            transaction.on_commit(lambda: _remove_replaced(old_folder))
    refresh_planner_statistics(Triple, Entity)  # SQLite: else the judge page's look-ups scan the KG's triples
    return kg


def _remove_replaced(folder: Path) -> None:
    try:
        shutil.rmtree(folder, ignore_errors=True)
    except KeyboardInterrupt:  # the new KG is committed: its clean-up finishes, the interrupt came too late
        shutil.rmtree(folder, ignore_errors=True)


def _outcome(name: str, written: list[str]) -> tuple[KnowledgeGraph | None, bool]:
    """(the KG this import committed although an exception followed, or None; whether its rows were rolled back, so
    that its files may go). Inside an outer transaction nothing is committed yet (it rolls back with the exception).
    When the database cannot tell (the interrupt broke the connection), neither: the files are kept, since an
    orphaned file is harmless and a KG row whose arrays were deleted is not."""
    if not written or connection.in_atomic_block:
        return None, True
    try:
        kg = KnowledgeGraph.objects.filter(name=name, arrays_file__in=written).first()
    except Exception:  # noqa: BLE001 - any database error: unknown
        return None, False
    return kg, kg is None


def data_notes(data: KGData) -> list[str]:
    """Repeated triples left out of a split (the later lines: a test triple's index is its place among the split's
    distinct triples), and valid / test triples that train states too (they leak the answer to a trained model)."""
    notes = [f"{split}: {count:,} repeated triple{'s' if count != 1 else ''} left out (each is kept at its first line)"
             for split, count in data.duplicates_skipped.items() if count]
    num_entities, num_relations = len(data.entity_keys), len(data.relation_keys)

    def keys(triples: np.ndarray) -> np.ndarray:
        return (triples[:, 0] * num_relations + triples[:, 1]) * num_entities + triples[:, 2]

    train = keys(data.splits["train"])
    for split in ("valid", "test"):
        leaked = int(np.isin(keys(data.splits[split]), train).sum()) if len(data.splits[split]) else 0
        if leaked:
            notes.append(f"{split}: {leaked:,} triple{'s' if leaked != 1 else ''} also in train (kept: a model "
                         "trained on train has seen their answer)")
    return notes


def _database_limits() -> FieldLimits:
    """The key and type lengths the tables hold: longer ones are refused by the reader, with their line."""
    return FieldLimits(
        entity_key=Entity._meta.get_field("key").max_length,
        relation_key=Relation._meta.get_field("key").max_length,
        type_name=min(Relation._meta.get_field(f).max_length for f in ("domain_type", "range_type")),
    )


def _refuse_replacing_used_kg(kg: KnowledgeGraph) -> None:
    """Samples, systems and pools point at entity rows: replacing them would silently orphan campaign data."""
    in_use = {"samples": kg.samples.count(), "systems": kg.systems.count()}
    if any(in_use.values()):
        listed = ", ".join(f"{count} {what}" for what, count in in_use.items() if count)
        raise KGImportError(f"{kg.name!r} is in use ({listed}); delete those first, or import under another name")


def _delete_kg(kg: KnowledgeGraph) -> None:
    # The ORM's cascade would load every triple and probe it per entity; these tables have no signals, so the
    # bulk rows go with plain DELETEs in dependency order.
    for model in (Triple, Entity, Relation):
        model.objects.filter(kg=kg)._raw_delete(model.objects.db)
    kg.delete()


def _write_kg(name: str, source: str, description: str, data: KGData, progress: ProgressFn,
              written: list[str], *, replacing: bool) -> KnowledgeGraph:
    counts = data.counts
    kg = KnowledgeGraph.objects.create(
        name=name,
        description=description,
        source=source,
        num_entities=counts["entities"],
        num_relations=counts["relations"],
        num_train=counts["train"],
        num_valid=counts["valid"],
        num_test=counts["test"],
        type_labels=data.type_labels,
    )
    progress("entities", 0, counts["entities"])
    entity_pk = write_entities(kg, data, replacing=replacing)
    progress("entities", counts["entities"], counts["entities"])
    relations = Relation.objects.bulk_create(
        [Relation(kg=kg, index=index, key=key, **asdict(data.relations[key])) for index, key in enumerate(data.relation_keys)],
    )
    relation_pk = np.array([relation.pk for relation in relations], dtype=np.int64)
    write_triples(kg, data.splits, entity_pk, relation_pk, progress, replacing=replacing)

    written.append(f"kg/{kg.pk}-{kg.name}/triples.npz")
    kg.arrays_file = save_arrays(written[-1], **data.splits)
    kg.save(update_fields=["arrays_file"])
    return kg
