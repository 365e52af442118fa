"""Reads of the pooling campaign: samples, questions, systems, rankings and pools.

Torch-free at import time (safe on the web request path); only :func:`ranking_result` imports the engine's
ranking module (and with it torch), lazily.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.db.models import QuerySet

from pooling.engine.questions import Questions, Ragged, known_answers
from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, PoolHit, Question, Ranking, Relation, Sample, System
from pooling.selectors.kg import kg_triples
from pooling.storage import load_arrays, storage_path

if TYPE_CHECKING:  # pragma: no cover
    from pooling.engine.ranking import RankingResult


# ------------------------------------------------------------------------------------ look-ups by name
def sample_by_ref(ref: str, kg: KnowledgeGraph | None = None) -> Sample:
    """A sample by ``name``, ``kg/name`` or numeric id; DoesNotExist / MultipleObjectsReturned say why."""
    samples = Sample.objects.select_related("kg")
    if kg is not None:
        samples = samples.filter(kg=kg)
    if ref.isdigit() and samples.filter(pk=int(ref)).exists():
        return samples.get(pk=int(ref))
    if "/" in ref:
        kg_name, _, name = ref.rpartition("/")
        matches = list(samples.filter(kg__name=kg_name, name=name))
    else:
        matches = list(samples.filter(name=ref))
    if not matches:
        known = ", ".join(f"{s.kg.name}/{s.name}" for s in samples.order_by("kg__name", "name")) or "none yet"
        raise Sample.DoesNotExist(f"no sample {ref!r} (known: {known})")
    if len(matches) > 1:
        raise Sample.MultipleObjectsReturned(f"several samples are named {ref!r}; write KG/NAME")
    return matches[0]


def systems_by_names(kg: KnowledgeGraph, names: list[str]) -> list[System]:
    """The systems of ``kg`` with these names, in the given order; DoesNotExist names the missing ones."""
    found = {system.name: system for system in System.objects.filter(kg=kg, name__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        known = ", ".join(System.objects.filter(kg=kg).values_list("name", flat=True)) or "none yet"
        raise System.DoesNotExist(f"no system {', '.join(map(repr, missing))} in {kg.name} (known: {known})")
    return [found[name] for name in names]


# ------------------------------------------------------------------------------------ index <-> row maps
def entity_pks(kg: KnowledgeGraph) -> np.ndarray:
    """int64 array: entity index -> Entity primary key."""
    return _pk_array(Entity.objects.filter(kg=kg), kg.num_entities)


def relation_pks(kg: KnowledgeGraph) -> np.ndarray:
    """int64 array: relation index -> Relation primary key."""
    return _pk_array(Relation.objects.filter(kg=kg), kg.num_relations)


def _pk_array(queryset: QuerySet, size: int) -> np.ndarray:
    pairs = np.array(list(queryset.values_list("index", "pk")), dtype=np.int64).reshape(-1, 2)
    result = np.full(max(size, int(pairs[:, 0].max()) + 1 if len(pairs) else 0), -1, dtype=np.int64)
    result[pairs[:, 0]] = pairs[:, 1]
    return result


def entity_keys(kg: KnowledgeGraph) -> list[str]:
    return list(Entity.objects.filter(kg=kg).order_by("index").values_list("key", flat=True))


# Look-ups of only the entities a pool or a file names: a campaign's steps stay linear in the pool, not in the
# KG's millions of entities (issue 18). IN lists in batches (SQLite allows 32,766 parameters).
IN_BATCH = 5000


def _batched(values) -> list[list]:
    values = list(dict.fromkeys(values))
    return [values[start:start + IN_BATCH] for start in range(0, len(values), IN_BATCH)]


def _entities_of_keys(kg_id: int, keys, column: str) -> dict[str, int]:
    # A key with a NUL byte names no entity (PostgreSQL text cannot hold one, and would refuse the query): it is
    # left out like any unknown key, so a user's file gets its file:line error, not a database error.
    found: dict[str, int] = {}
    for batch in _batched(key for key in keys if "\x00" not in key):
        found.update(Entity.objects.filter(kg_id=kg_id, key__in=batch).values_list("key", column))
    return found


def entity_indices_of_keys(kg: KnowledgeGraph, keys) -> dict[str, int]:
    """key -> index of the entities of ``kg`` among ``keys`` (unknown keys are left out)."""
    return _entities_of_keys(kg.pk, keys, "index")


def entity_pks_of_keys(kg_id: int, keys) -> dict[str, int]:
    """key -> pk of the entities of KG ``kg_id`` among ``keys`` (unknown keys are left out)."""
    return _entities_of_keys(kg_id, keys, "pk")


def entity_keys_of_indices(kg: KnowledgeGraph, indices) -> dict[int, str]:
    """index -> key of the entities of ``kg`` at ``indices``."""
    found: dict[int, str] = {}
    for batch in _batched(int(i) for i in indices):
        found.update(Entity.objects.filter(kg=kg, index__in=batch).values_list("index", "key"))
    return found


def entity_fields_of_pks(pks, *fields: str) -> dict[int, tuple]:
    """pk -> (fields...) of the entities with these primary keys."""
    found: dict[int, tuple] = {}
    for batch in _batched(int(pk) for pk in pks):
        for pk, *values in Entity.objects.filter(pk__in=batch).values_list("pk", *fields):
            found[pk] = tuple(values)
    return found


def entity_pks_of_indices(kg: KnowledgeGraph, indices) -> dict[int, int]:
    """index -> primary key of the entities of ``kg`` at ``indices``."""
    found: dict[int, int] = {}
    for batch in _batched(int(i) for i in indices):
        found.update(Entity.objects.filter(kg=kg, index__in=batch).values_list("index", "pk"))
    return found


def known_triples(kg: KnowledgeGraph) -> np.ndarray:
    """Every known triple (train + valid + test) as an int64 (n, 3) index array."""
    arrays = kg_triples(kg)
    return np.concatenate([arrays["train"], arrays["valid"], arrays["test"]])


# ------------------------------------------------------------------------------------ samples, questions
def sample_triples(sample: Sample) -> np.ndarray:
    """The sampled triples as an int64 (n, 3) index array, in sample order."""
    rows = sample.triples.order_by("position").values_list("head__index", "relation__index", "tail__index")
    return np.array(list(rows), dtype=np.int64).reshape(-1, 3)


def sample_test_indices(sample: Sample) -> np.ndarray:
    return np.array(list(sample.triples.order_by("position").values_list("test_index", flat=True)), dtype=np.int64)


@dataclass(frozen=True)
class SampleQuestions:
    """A sample's questions in ranking-row order, with their answers among the sampled triples."""

    questions: Questions
    answers: Ragged  # the sample's answers of each question (the ranking targets)
    qids: list[str]
    pks: np.ndarray  # Question primary keys, aligned with the rows

    def __len__(self) -> int:
        return len(self.qids)


def sample_questions(sample: Sample) -> SampleQuestions:
    rows = list(
        Question.objects.filter(sample=sample)
        .order_by("position")
        .values_list("pk", "qid", "side", "anchor__index", "relation__index")
    )
    pks = np.array([row[0] for row in rows], dtype=np.int64)
    questions = Questions(
        anchor=np.array([row[3] for row in rows], dtype=np.int64),
        relation=np.array([row[4] for row in rows], dtype=np.int64),
        side=np.array([row[2] for row in rows], dtype=np.int8),
    )
    answers = known_answers(questions, sample_triples(sample))
    return SampleQuestions(questions, answers, [row[1] for row in rows], pks)


def question_filter(kg: KnowledgeGraph, questions: Questions) -> Ragged:
    """Known answers (train + valid + test) of each question: never candidates, never pooled."""
    return known_answers(questions, _cached_known_triples(kg))


_KNOWN_CACHE: dict[tuple[object, ...], np.ndarray] = {}


def _cached_known_triples(kg: KnowledgeGraph) -> np.ndarray:
    """:func:`known_triples`, read once per process while the KG's arrays file stays the same (a worker filters
    every ranking chunk of a pool with them: 0.6 s a chunk at 5M triples), read-only; only the last KG is kept."""
    try:
        stat = storage_path(kg.arrays_file).stat()
    except (OSError, ValueError):
        return known_triples(kg)  # the loader's own error
    key = (kg.pk, str(storage_path(kg.arrays_file)), stat.st_mtime_ns, stat.st_size)
    known = _KNOWN_CACHE.get(key)
    if known is None:
        known = known_triples(kg)
        known.flags.writeable = False
        _KNOWN_CACHE.clear()
        _KNOWN_CACHE[key] = known
    return known


# ------------------------------------------------------------------------------------ rankings
def ranking_result(ranking: Ranking) -> "RankingResult":
    """The stored RankingResult (imports the ranking engine, hence torch)."""
    from pooling.engine.ranking import RankingResult

    return RankingResult.from_arrays(load_arrays(ranking.ranking_file))


# ------------------------------------------------------------------------------------ pools
def pool_entries(pool: Pool, max_depth: int | None = None) -> QuerySet[PoolEntry]:
    """Entries of the pool, optionally only those of depth <= ``max_depth`` (unknown depths excluded)."""
    entries = PoolEntry.objects.filter(pool=pool)
    if max_depth is not None:
        entries = entries.filter(depth__lte=max_depth)
    return entries.order_by("depth", "head__index", "relation__index", "tail__index")


def pool_entry_array(pool: Pool, max_depth: int | None = None) -> np.ndarray:
    """int64 (n, 4) array of (head, relation, tail, depth) indices, sorted by (h, r, t); depth -1 if unknown."""
    rows = pool_entries(pool, max_depth).values_list("head__index", "relation__index", "tail__index", "depth")
    array = np.array([(h, r, t, -1 if d is None else d) for h, r, t, d in rows], dtype=np.int64).reshape(-1, 4)
    return array[np.lexsort((array[:, 2], array[:, 1], array[:, 0]))] if len(array) else array


def pool_entry_systems(entry: PoolEntry) -> list[str]:
    """Names of the systems that retrieved ``entry`` (sorted)."""
    return sorted(set(PoolHit.objects.filter(entry=entry).values_list("system__name", flat=True)))


def pool_hits(pool: Pool) -> list[tuple[int, int, int, str, str, int | None]]:
    """Provenance rows (head, relation, tail, system name, qid, rank) of the whole pool, sorted."""
    rows = PoolHit.objects.filter(entry__pool=pool).values_list(
        "entry__head__index", "entry__relation__index", "entry__tail__index", "system__name", "question__qid", "rank"
    )
    return sorted(rows, key=lambda row: (row[0], row[1], row[2], row[3], row[4]))


def pool_export_rows(pool: Pool) -> list[tuple[str, str, str, int | None, list[str]]]:
    """(head key, relation key, tail key, depth, system names) for every entry: the `import_pool` format."""
    systems: dict[int, set[str]] = {}
    for entry_id, name in PoolHit.objects.filter(entry__pool=pool).values_list("entry_id", "system__name"):
        systems.setdefault(entry_id, set()).add(name)
    rows = pool_entries(pool).values_list("pk", "head__key", "relation__key", "tail__key", "depth")
    return [(h, r, t, d, sorted(systems.get(pk, ()))) for pk, h, r, t, d in rows]


def pool_progress(pool: Pool) -> tuple[int, int]:
    """(chunks done, chunks in all) of a pool build, read fresh from the database."""
    done, total = Pool.objects.filter(pk=pool.pk).values_list("progress_done", "progress_total").get()
    return done, total
