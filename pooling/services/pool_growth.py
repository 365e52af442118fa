"""Writes: growing a built pool in place, deeper or with more systems (a campaign file's changed ``[pool]``).

The pool keeps its row, so the campaigns on it keep their items and judgments: a deeper pool of the same
systems, or the same depth with more systems, holds every entry it held before (each system's top-k is a prefix
of its top-k'), and the merge is an upsert that leaves the rows that stay untouched. The ranking chunks of the
old depth are dropped (their top-k is too short) and ranked again at the new depth by the usual build
(``services.pools.build_pool_now`` / ``start_pool_build``). A pool never shrinks here: a shallower depth or a
system taken out would drop candidates, and an entry people judged cannot be dropped at all (its items' judgments
are PROTECTed: the merge would raise ProtectedError and the build fail, nothing lost).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass

from django.db import transaction

from pooling.models import Pool, PoolChunk, System
from pooling.services.pools import PoolError, chunk_file, default_pool_name
from pooling.storage import storage_path


@dataclass(frozen=True)
class PoolChange:
    """How a pool would change to reach a depth and a set of systems."""

    old_depth: int
    new_depth: int
    added: tuple[str, ...]  # system names
    removed: tuple[str, ...]

    @property
    def grows(self) -> bool:
        return (self.new_depth > self.old_depth or bool(self.added)) and self.shrinks is None

    @property
    def shrinks(self) -> str | None:
        """Why the change would drop candidates (None: it does not)."""
        if self.new_depth < self.old_depth:
            return f"depth {self.old_depth} -> {self.new_depth} would drop candidates"
        if self.removed:
            return f"leaving out {', '.join(self.removed)} would drop their candidates"
        return None

    def describe(self) -> str:
        parts = []
        if self.new_depth != self.old_depth:
            parts.append(f"depth {self.old_depth} -> {self.new_depth}")
        if self.added:
            parts.append("add " + ", ".join(self.added))
        if self.removed:
            parts.append("remove " + ", ".join(self.removed))
        return "; ".join(parts) or "unchanged"


def chunks_folder(pool: Pool) -> str:
    """The storage folder of the pool's ranking chunks (``services.pools.chunk_file``)."""
    return chunk_file(pool, System(pk=0), 0).split("/system-")[0]


def pool_change(pool: Pool, depth: int, system_names: list[str] | tuple[str, ...]) -> PoolChange:
    current = set(pool.systems.values_list("name", flat=True))
    wanted = set(system_names)
    return PoolChange(pool.depth, depth, tuple(sorted(wanted - current)), tuple(sorted(current - wanted)))


def grow_pool(pool: Pool, depth: int, systems: list[System]) -> Pool:
    """Make ``pool`` the pool of ``systems`` at ``depth`` (a superset of what it is), ready to be built again.

    Refused (PoolError, nothing written) for an imported pool, a shallower depth, a system left out, a system
    not ready or of another KG. A pool named by default (``depth10-a+b``) is renamed for its new depth and
    systems when that name is free. Returns the pool, pending: build it with the pool services."""
    change = pool_change(pool, depth, [s.name for s in systems])
    if pool.origin != Pool.Origin.BUILT:
        raise PoolError(f"pool {pool.name!r} was imported; only a pool built here can grow")
    if change.shrinks:
        raise PoolError(f"pool {pool.name!r}: {change.shrinks}; a pool only grows (deeper, more systems)")
    if not change.grows:
        return pool
    kg = pool.sample.kg
    if depth > kg.num_entities:
        raise PoolError(f"the pool depth must be between 1 and the {kg.num_entities} entities of {kg.name}, "
                        f"got {depth}")
    for system in systems:
        if system.kg_id != kg.pk:
            raise PoolError(f"system {system.name!r} belongs to {system.kg.name}, the pool to {kg.name}")
        if system.status != System.Status.READY:
            raise PoolError(f"system {system.name!r} is not ready (status {system.status})")
    with transaction.atomic():
        pool = Pool.objects.select_for_update().get(pk=pool.pk)
        old_default = default_pool_name(pool.depth, list(pool.systems.all()))
        new_name = default_pool_name(depth, systems)
        if pool.name == old_default and not Pool.objects.filter(sample=pool.sample, name=new_name).exists():
            pool.name = new_name
        PoolChunk.objects.filter(pool=pool).delete()
        pool.depth = depth
        pool.status = Pool.Status.PENDING
        pool.progress_done = pool.progress_total = 0
        pool.save(update_fields=["name", "depth", "status", "progress_done", "progress_total", "updated_at"])
        pool.systems.add(*systems)
    # every chunk file of the pool holds a top-k at the old depth (a chunk of a crashed build too, which has no
    # PoolChunk row): the build ranks them again
    shutil.rmtree(storage_path(chunks_folder(pool)), ignore_errors=True)
    return pool
