"""Writes: pools (SPEC 3) — the union of the systems' filtered top-k over a sample's questions.

A build is split into ranking chunks, one per (system, range of questions), each writing its own result file
atomically (keyed by pool, system and chunk, so a retried or re-run chunk finds its file and skips the work),
then one merge that turns the top-k lists into PoolEntry / PoolHit rows in one transaction. The merge is an
upsert against the unique (pool, head, relation, tail) constraint: rows that already hold the right values are
left alone (their ids survive, judgments can point at them), so merging twice changes nothing.

The same services run on Celery workers (pooling.tasks) or in-process (:func:`build_pool_now`).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from celery import chord, signature
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from pooling import task_names
from pooling.engine import userfiles
from pooling.engine.questions import HEAD, TAIL
from pooling.engine.userfiles import shown
from pooling.models import KnowledgeGraph, Pool, PoolChunk, PoolEntry, PoolHit, Sample, System
from pooling.selectors.kg import kg_relation_keys
from pooling.selectors.pools import (
    entity_keys, entity_pks, question_filter, relation_pks, sample_questions, sample_test_indices,
)
from pooling.services.names import checked_name, fit
from pooling.storage import load_arrays, save_arrays, storage_path

ProgressFn = Callable[[str, int, int], None]
DEFAULT_CHUNK_SIZE = 256


class PoolError(Exception):
    """A pool could not be created, built or imported; nothing was written by the failing step."""


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


# ------------------------------------------------------------------------------------ creation
def default_pool_name(depth: int, systems: list[System]) -> str:
    return f"depth{depth}-" + "+".join(sorted(system.name for system in systems))


def depth_refusal(depth: int, entities: int, kg_name: str) -> str:
    """Why a pool cannot have ``depth`` on a KG of ``entities`` ('' when it can): a rank is at most the number of
    entities. Also the campaign plan's check, before the KG is imported (``campaign_checks``)."""
    if 1 <= depth <= entities:
        return ""
    return f"the pool depth must be between 1 and the {entities} entities of {kg_name}, got {depth}"


def create_pool(
    sample: Sample, systems: list[System], depth: int, *, name: str | None = None, chunk_size: int | None = None
) -> Pool:
    """The pool of ``systems`` at ``depth`` on ``sample``; an existing pool of that name is returned when it has
    the same systems and depth (so asking twice for the same pool is idempotent), else PoolError."""
    if problem := depth_refusal(depth, sample.kg.num_entities, sample.kg.name):
        raise PoolError(problem)
    if not systems:
        raise PoolError("a pool needs at least one system")
    for system in systems:
        if system.kg_id != sample.kg_id:
            raise PoolError(f"system {system.name!r} belongs to {system.kg.name}, the sample to {sample.kg.name}")
        if system.status != System.Status.READY:
            raise PoolError(f"system {system.name!r} is not ready (status {system.status})")
    name = checked_name("pool", name or default_pool_name(depth, systems), PoolError)
    chunk_size = chunk_size or getattr(settings, "KGPOOL_POOL_CHUNK_QUESTIONS", DEFAULT_CHUNK_SIZE)
    with transaction.atomic():
        pool = Pool.objects.filter(sample=sample, name=name).first()
        if pool is not None:
            same = pool.depth == depth and set(pool.systems.values_list("pk", flat=True)) == {s.pk for s in systems}
            if not same or pool.origin != Pool.Origin.BUILT:
                raise PoolError(f"a different pool named {name!r} already exists on sample {sample.name}")
            return pool
        pool = Pool.objects.create(sample=sample, name=name, depth=depth, chunk_size=chunk_size)
        pool.systems.set(systems)
    return pool


def chunk_ranges(pool: Pool) -> list[tuple[int, int]]:
    """(start, stop) question rows of each chunk."""
    num_questions = pool.sample.questions.count()
    return [(start, min(start + pool.chunk_size, num_questions)) for start in range(0, num_questions, pool.chunk_size)]


def chunk_file(pool: Pool, system: System, index: int) -> str:
    return f"pools/{pool.pk}/system-{system.pk}/chunk-{index:05d}.npz"


def pool_systems(pool: Pool) -> list[System]:
    return list(pool.systems.order_by("name"))


def pool_tasks(pool: Pool) -> list[tuple[int, int]]:
    """(system id, chunk index) of every ranking chunk of the build."""
    return [(system.pk, index) for system in pool_systems(pool) for index in range(len(chunk_ranges(pool)))]


# ------------------------------------------------------------------------------------ building
def prepare_pool_build(pool: Pool, *, force: bool = False) -> bool:
    """Mark the pool running and count its chunks; False when it is already done (nothing to do) unless forced."""
    with transaction.atomic():
        pool = Pool.objects.select_for_update().get(pk=pool.pk)
        if pool.origin != Pool.Origin.BUILT:
            raise PoolError(f"pool {pool.name!r} was imported; it cannot be built")
        if pool.status == Pool.Status.DONE and not force:
            return False
        total = len(pool_tasks(pool))
        Pool.objects.filter(pk=pool.pk).update(
            status=Pool.Status.RUNNING, error="", progress_total=total,
            progress_done=PoolChunk.objects.filter(pool=pool).count(), started_at=timezone.now(), finished_at=None,
        )
    return True


def start_pool_build(pool: Pool, *, force: bool = False, robust: bool = False) -> bool:
    """Build the pool on Celery workers: one ranking task per (system, chunk) on the GPU queue, merged by a chord
    callback, dispatched once the current transaction commits. False when the pool is already done. ``robust``:
    an error of the dispatch (or of the build itself, when tasks run in-process) is logged, not raised: the pool
    records it (the API answers with the pool's status)."""
    if not prepare_pool_build(pool, force=force):
        return False
    pool_id = pool.pk
    transaction.on_commit(lambda: dispatch_pool_build(pool_id, force=force), robust=robust)
    return True


def dispatch_pool_build(pool_id: int, *, force: bool = False) -> None:
    """Send the pool's chunk tasks and the merge callback (called from transaction.on_commit), by task name."""
    header = [signature(task_names.RANK_POOL_CHUNK, args=(pool_id, system_id, index))
              for system_id, index in pool_tasks(Pool.objects.get(pk=pool_id))]
    if not header:  # nothing to rank: the merge alone (its first argument stands for the chunks' results)
        signature(task_names.MERGE_POOL, args=(None, pool_id), kwargs={"force": force}).delay()
        return
    merge = signature(task_names.MERGE_POOL, args=(pool_id,), kwargs={"force": force})
    chord(header)(merge.on_error(signature(task_names.POOL_BUILD_FAILED, kwargs={"pool_id": pool_id})))


#: the error of a pool whose in-process build was interrupted (build_pool again finishes it: done chunks are kept)
INTERRUPTED = "interrupted before it finished; build it again to finish it (the ranking chunks done are kept)"


def build_pool_now(pool: Pool, *, force: bool = False, device: str | None = None,
                   progress: ProgressFn = _no_progress) -> Pool:
    """Build the pool in this process (embedded mode, quickstart, tests); the same steps as the workers'."""
    if prepare_pool_build(pool, force=force):
        tasks = pool_tasks(pool)
        progress("rank chunks", 0, len(tasks))
        try:
            for done, (system_id, index) in enumerate(tasks, start=1):
                rank_pool_chunk(pool, System.objects.get(pk=system_id), index, device=device)
                progress("rank chunks", done, len(tasks))
            merge_pool(pool, force=force)
        except Exception as exc:
            mark_pool_failed(pool, f"{type(exc).__name__}: {exc}")
            raise
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (kgpool.commands): not left "running" for ever
            try:
                mark_pool_failed(pool, INTERRUPTED)
            except Exception:  # noqa: BLE001 - the database went with the interruption: the interruption is the news
                pass
            raise
    pool.refresh_from_db()
    return pool


def rank_pool_chunk(pool: Pool, system: System, index: int, *, device: str | None = None) -> bool:
    """Rank chunk ``index`` of the pool's questions with ``system``; True if computed, False if already done."""
    from pooling.services.rankings import rank_rows

    relative = chunk_file(pool, system, index)
    computed = False
    if not storage_path(relative).exists():
        sample = pool.sample
        start, stop = chunk_ranges(pool)[index]
        result = rank_rows(system, sample, sample_questions(sample), start, stop, k=pool.depth, device=device)
        save_arrays(relative, **result.to_arrays())
        computed = True
    PoolChunk.objects.get_or_create(pool=pool, system=system, index=index, defaults={"result_file": relative})
    Pool.objects.filter(pk=pool.pk).update(progress_done=PoolChunk.objects.filter(pool=pool).count())
    return computed


def mark_pool_failed(pool: Pool | int, error: str) -> None:
    pool_id = pool.pk if isinstance(pool, Pool) else pool
    Pool.objects.filter(pk=pool_id).exclude(status=Pool.Status.DONE).update(
        status=Pool.Status.FAILED, error=error[:10000], finished_at=timezone.now()
    )


def merge_pool(pool: Pool, *, force: bool = False) -> Pool:
    """Turn the chunks' top-k lists into the pool's entries and provenance (one transaction, upsert)."""
    from pooling.engine.ranking import RankingResult
    from pooling.services.rankings import concat_results, save_ranking, stored_ranking

    pool.refresh_from_db()
    if pool.status == Pool.Status.DONE and not force:
        return pool
    sample, kg = pool.sample, pool.sample.kg
    sq = sample_questions(sample)
    ranges = chunk_ranges(pool)
    systems = pool_systems(pool)
    filter_sets = question_filter(kg, sq.questions)
    hit_parts = []
    for system in systems:
        parts = []
        for index in range(len(ranges)):
            relative = chunk_file(pool, system, index)
            if not storage_path(relative).exists():
                raise PoolError(f"chunk {index} of system {system.name!r} is missing; build the pool again")
            parts.append(RankingResult.from_arrays(load_arrays(relative)))
        result = concat_results(parts) if parts else None
        if result is None:
            continue
        if system.origin == System.Origin.TRAINED and stored_ranking(system, sample, pool.depth) is None:
            save_ranking(system, sample, result)  # the sparse ranks come for free with the pool
        topk = result.topk_entities[:, : pool.depth]
        rows, columns = np.nonzero(topk >= 0)
        hit_parts.append(np.stack([rows, topk[rows, columns], columns + 1, np.full(rows.size, system.pk)], axis=1))
    hits = np.concatenate(hit_parts) if hit_parts else np.zeros((0, 4), dtype=np.int64)
    hits = hits.astype(np.int64)
    # safety net: a known answer is never pooled (rankings already exclude them)
    from pooling.services.rankings import _in_sets

    hits = hits[~_in_sets(filter_sets, hits[:, 0], hits[:, 1], kg.num_entities)]
    question_rows, entity, rank, system_pk = hits.T
    side = sq.questions.side[question_rows]
    anchor, relation = sq.questions.anchor[question_rows], sq.questions.relation[question_rows]
    head = np.where(side == HEAD, entity, anchor)
    tail = np.where(side == HEAD, anchor, entity)
    entity_pk, relation_pk = entity_pks(kg), relation_pks(kg)
    triples = np.stack([entity_pk[head], relation_pk[relation], entity_pk[tail]], axis=1)
    hit_rows = [
        (tuple(triple), int(system), int(sq.pks[row]), int(r))
        for triple, system, row, r in zip(triples.tolist(), system_pk.tolist(), question_rows.tolist(), rank.tolist())
    ]
    with transaction.atomic():
        Pool.objects.select_for_update().filter(pk=pool.pk).first()
        write_entries(pool, hit_rows)
        Pool.objects.filter(pk=pool.pk).update(
            status=Pool.Status.DONE, error="", progress_done=PoolChunk.objects.filter(pool=pool).count(),
            finished_at=timezone.now(),
        )
    pool.refresh_from_db()
    return pool


def write_entries(pool: Pool, hit_rows: list[tuple[tuple[int, int, int], int | None, int, int | None]],
                  depths: dict[tuple[int, int, int], int | None] | None = None) -> None:
    """Upsert the pool's entries and hits to exactly ``hit_rows`` = ((head pk, relation pk, tail pk), system pk,
    question pk, rank). An entry's depth is its best hit rank unless ``depths`` gives it. Call inside a transaction.
    """
    desired: dict[tuple[int, int, int], tuple[int | None, int]] = {}
    systems_of: dict[tuple[int, int, int], set[int]] = {}
    best: dict[tuple[int, int, int], int | None] = {}
    for triple, system, _question, rank in hit_rows:
        systems_of.setdefault(triple, set())
        if system is not None:
            systems_of[triple].add(system)
        if rank is not None and (best.get(triple) is None or rank < best[triple]):
            best[triple] = rank
        else:
            best.setdefault(triple, None)
    for triple in systems_of:
        depth = depths[triple] if depths is not None and triple in depths else best[triple]
        desired[triple] = (depth, len(systems_of[triple]))

    existing = {
        (h, r, t): (pk, depth, count)
        for pk, h, r, t, depth, count in PoolEntry.objects.filter(pool=pool).values_list(
            "pk", "head_id", "relation_id", "tail_id", "depth", "num_systems"
        )
    }
    stale = [pk for triple, (pk, _d, _c) in existing.items() if triple not in desired]
    for start in range(0, len(stale), 5000):
        PoolEntry.objects.filter(pk__in=stale[start : start + 5000]).delete()
    changed = []
    for triple, (pk, depth, count) in existing.items():
        if triple in desired and desired[triple] != (depth, count):
            changed.append(PoolEntry(pk=pk, depth=desired[triple][0], num_systems=desired[triple][1]))
    if changed:
        PoolEntry.objects.bulk_update(changed, ["depth", "num_systems"], batch_size=2000)
    missing = [triple for triple in desired if triple not in existing]
    missing.sort(key=lambda triple: (desired[triple][0] is None, desired[triple][0] or 0, triple))
    PoolEntry.objects.bulk_create(
        [PoolEntry(pool=pool, head_id=h, relation_id=r, tail_id=t, depth=desired[(h, r, t)][0],
                   num_systems=desired[(h, r, t)][1]) for h, r, t in missing],
        batch_size=2000, ignore_conflicts=True,
    )
    entry_pk = {
        (h, r, t): pk
        for pk, h, r, t in PoolEntry.objects.filter(pool=pool).values_list("pk", "head_id", "relation_id", "tail_id")
    }
    wanted_hits = {(entry_pk[triple], system, question): rank for triple, system, question, rank in hit_rows}
    existing_hits = {
        (entry, system, question): (pk, rank)
        for pk, entry, system, question, rank in PoolHit.objects.filter(entry__pool=pool).values_list(
            "pk", "entry_id", "system_id", "question_id", "rank"
        )
    }
    stale_hits = [pk for key, (pk, _rank) in existing_hits.items() if key not in wanted_hits]
    for start in range(0, len(stale_hits), 5000):
        PoolHit.objects.filter(pk__in=stale_hits[start : start + 5000]).delete()
    changed_hits = [PoolHit(pk=pk, rank=wanted_hits[key]) for key, (pk, rank) in existing_hits.items()
                    if key in wanted_hits and wanted_hits[key] != rank]
    if changed_hits:
        PoolHit.objects.bulk_update(changed_hits, ["rank"], batch_size=2000)
    PoolHit.objects.bulk_create(
        [PoolHit(entry_id=entry, system_id=system, question_id=question, rank=rank)
         for (entry, system, question), rank in sorted(wanted_hits.items(), key=lambda item: (item[0][0], item[0][1] or 0, item[0][2]))
         if (entry, system, question) not in existing_hits],
        batch_size=2000, ignore_conflicts=True,
    )
    touch_pool(pool.pk)


def touch_pool(pool_id: int) -> None:
    """Mark the pool's entries or hits as changed: readers that keep derived arrays of a pool
    (``annotation.selectors.pool_view``) name them after ``Pool.updated_at``."""
    Pool.objects.filter(pk=pool_id).update(updated_at=timezone.now())


# ------------------------------------------------------------------------------------ import
def import_pool(
    kg: KnowledgeGraph,
    pool_path: Path | str,
    sample_path: Path | str,
    *,
    name: str | None = None,
    sample_name: str | None = None,
    depth: int | None = None,
) -> tuple[Pool, dict[str, int]]:
    """Import a pool built elsewhere: lines ``h r t [depth] [systems]`` (keys; depth an integer or ``-``; systems
    comma-separated names) on the sample in ``sample_path`` (test indices or test triples, one per line).

    Each entry must answer a sampled question: (h, r) of a tail question or (r, t) of a head question; every
    question it answers is recorded in its hits. Known triples (train / valid / test) are skipped and counted.
    Systems named in the file are created as imported systems when the KG has none of that name. Everything is
    validated first and written in one transaction. Returns the pool and counts (entries, skipped_known, hits).
    """
    from pooling.services.samples import SampleError, create_sample, read_sample_file

    pool_path, sample_path = Path(pool_path), Path(sample_path)
    if sample_name is not None:
        checked_name("sample", sample_name, PoolError)
    if name is not None:
        checked_name("pool", name, PoolError)
    max_depth = max(kg.num_entities, 1)  # a rank is at most the number of entities
    if depth is not None and not 1 <= depth <= max_depth:
        raise PoolError(f"the pool depth must be between 1 and the {kg.num_entities} entities of {kg.name}, "
                        f"got {depth}")
    try:
        indices = np.unique(read_sample_file(kg, sample_path))
    except SampleError as exc:
        raise PoolError(str(exc)) from None
    sample_name = sample_name or slugify(sample_path.stem)[:100] or "sample"
    sample = Sample.objects.filter(kg=kg, name=sample_name).first()
    if sample is not None and not np.array_equal(sample_test_indices(sample), indices):
        raise PoolError(f"{sample_path}: sample {sample_name!r} already exists in {kg.name} with other triples "
                        f"(choose another --sample-name)")
    name = name or slugify(pool_path.stem)[:200] or "imported-pool"
    if sample is not None and Pool.objects.filter(sample=sample, name=name).exists():
        raise PoolError(f"a pool named {name!r} already exists on sample {sample_name}")

    entities = {key: index for index, key in enumerate(entity_keys(kg))}
    relations = {key: index for index, key in enumerate(kg_relation_keys(kg))}
    from pooling.selectors.pools import known_triples

    known = known_triples(kg)
    num_e, num_r = max(kg.num_entities, 1), max(kg.num_relations, 1)
    known_keys = set(((known[:, 0] * num_r + known[:, 1]) * num_e + known[:, 2]).tolist())
    from pooling.selectors.kg import kg_triples
    from pooling.services.samples import question_table

    sampled = kg_triples(kg)["test"][indices]
    table, _members = question_table(sampled)
    question_of = {(side, anchor, relation): position for position, (_qid, side, anchor, relation) in enumerate(table)}

    parsed: list[tuple[int, int, int, int | None, list[str], list[int]]] = []
    seen: dict[tuple[int, int, int], int] = {}
    skipped_known = 0
    try:
        # split on line ends only (\r\n and \r become \n): str.splitlines() also splits on \x1c, \x85,
        # \u2028..., and the line numbers of the errors would no longer be the editor's
        lines = userfiles.read_text(pool_path, universal_newlines=True).split("\n")
    except userfiles.UserFileError as exc:
        raise PoolError(f"{exc.where}: cannot read file: {exc.message}") from None
    for number, raw in enumerate(lines, start=1):
        fields = raw.split("\t") if "\t" in raw else raw.split()
        fields = [field.strip() for field in fields]
        if not fields or not fields[0] or fields[0].startswith("#"):
            continue
        if not 3 <= len(fields) <= 5:
            raise PoolError(f"{pool_path}:{number}: expected `h r t [depth] [systems]`, got {len(fields)} fields")
        h_key, r_key, t_key = fields[:3]
        entry_depth: int | None = None
        system_field = ""
        if len(fields) >= 4:
            if fields[3] in ("", "-"):
                entry_depth = None
            elif fields[3].isascii() and fields[3].isdigit():  # not str.isdigit() alone: '²' is a digit too
                entry_depth = int(fields[3]) if len(fields[3]) <= 12 else max_depth + 1
                if not 1 <= entry_depth <= max_depth:
                    raise PoolError(f"{pool_path}:{number}: depth {shown(fields[3])} is not between 1 and the "
                                    f"{kg.num_entities} entities of {kg.name}")
            elif len(fields) == 4:
                system_field = fields[3]
            else:
                raise PoolError(f"{pool_path}:{number}: depth {shown(fields[3])} is not a positive integer or '-'")
        if len(fields) == 5:
            system_field = fields[4]
        system_names = list(dict.fromkeys(s.strip() for s in system_field.split(",") if s.strip() and s.strip() != "-"))
        for system_name in system_names:
            try:
                checked_name("system", system_name, PoolError)
            except PoolError as exc:
                raise PoolError(f"{pool_path}:{number}: {exc}") from None
        if h_key not in entities:
            raise PoolError(f"{pool_path}:{number}: unknown entity {shown(h_key)}")
        if t_key not in entities:
            raise PoolError(f"{pool_path}:{number}: unknown entity {shown(t_key)}")
        if r_key not in relations:
            raise PoolError(f"{pool_path}:{number}: unknown relation {shown(r_key)}")
        h, r, t = entities[h_key], relations[r_key], entities[t_key]
        if (h, r, t) in seen:
            raise PoolError(f"{pool_path}:{number}: ({h_key}, {r_key}, {t_key}) is listed twice (first on line {seen[(h, r, t)]})")
        seen[(h, r, t)] = number
        if ((h * num_r + r) * num_e + t) in known_keys:
            skipped_known += 1
            continue
        answered = [question_of[key] for key in ((HEAD, t, r), (TAIL, h, r)) if key in question_of]
        if not answered:
            raise PoolError(f"{pool_path}:{number}: ({h_key}, {r_key}, {t_key}) answers no sampled question: neither "
                            f"({h_key}, {r_key}, ?) nor (?, {r_key}, {t_key}) is asked by the sample")
        parsed.append((h, r, t, entry_depth, system_names, answered))
    if not parsed:
        raise PoolError(f"{pool_path}: no pool entries (besides {skipped_known} known triples)")
    if depth is None:
        depth = max((entry[3] for entry in parsed if entry[3] is not None), default=0) or 1

    entity_pk, relation_pk = entity_pks(kg), relation_pks(kg)
    all_names = sorted({system_name for entry in parsed for system_name in entry[4]})
    with transaction.atomic():
        if sample is None:
            sample = create_sample(kg, name=sample_name, method=Sample.Method.FILE, seed=None, indices=indices,
                                   source=fit(str(sample_path.resolve()), "Sample", "source"))
        systems = {system.name: system for system in System.objects.filter(kg=kg, name__in=all_names)}
        for system_name in all_names:
            if system_name not in systems:
                systems[system_name] = System.objects.create(
                    kg=kg, name=system_name, origin=System.Origin.IMPORTED, status=System.Status.READY,
                    config={"pool_file": str(pool_path.resolve())},
                )
        pool = Pool.objects.create(
            sample=sample, name=name, depth=depth, origin=Pool.Origin.IMPORTED, status=Pool.Status.DONE,
            source=fit(str(pool_path.resolve()), "Pool", "source"), started_at=timezone.now(), finished_at=timezone.now(),
        )
        pool.systems.set(list(systems.values()))
        question_pks = list(sample.questions.order_by("position").values_list("pk", flat=True))
        hit_rows = []
        depths = {}
        for h, r, t, entry_depth, system_names, answered in parsed:
            triple = (int(entity_pk[h]), int(relation_pk[r]), int(entity_pk[t]))
            depths[triple] = entry_depth
            for position in answered:
                for system_name in system_names or [None]:
                    system_id = systems[system_name].pk if system_name else None
                    hit_rows.append((triple, system_id, question_pks[position], None))  # per-system rank unknown
        write_entries(pool, hit_rows, depths)
    return pool, {"entries": len(parsed), "skipped_known": skipped_known, "hits": len(hit_rows)}
