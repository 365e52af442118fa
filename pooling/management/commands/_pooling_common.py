"""Shared helpers of the pooling management commands (not a command: the name starts with _)."""
from __future__ import annotations

import time

from django.conf import settings
from django.core.management.base import CommandError

from pooling.management.progress import StageProgress


def embedded() -> bool:
    """True when Celery runs tasks in-process (no broker configured)."""
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


def get_kg(name: str):
    from pooling.models import KnowledgeGraph
    from pooling.selectors.kg import kg_by_name

    try:
        return kg_by_name(name)
    except KnowledgeGraph.DoesNotExist as exc:
        raise CommandError(str(exc)) from None


def get_sample(ref: str, kg=None):
    from pooling.models import Sample
    from pooling.selectors.pools import sample_by_ref

    try:
        return sample_by_ref(ref, kg)
    except (Sample.DoesNotExist, Sample.MultipleObjectsReturned) as exc:
        raise CommandError(str(exc)) from None


def wait_for_pool(pool, progress: StageProgress, timeout: float | None = None, interval: float = 1.0):
    """Poll the pool's progress until done/failed, drawing a bar; returns the refreshed pool."""
    from pooling.models import Pool

    started = time.monotonic()
    while True:
        pool.refresh_from_db()
        progress("rank chunks", pool.progress_done, max(pool.progress_total, 1))
        if pool.status in (Pool.Status.DONE, Pool.Status.FAILED):
            return pool
        if timeout is not None and time.monotonic() - started > timeout:
            raise CommandError(f"pool {pool.name!r} not finished after {timeout:.0f} s (still {pool.status}); "
                               f"check it later with `pool_status`")
        time.sleep(interval)
