"""Celery tasks of the pooling app: thin wrappers that load rows by id and call a service.

Routing (settings.CELERY_TASK_ROUTES): ``pooling.tasks.train_*`` and ``pooling.tasks.rank_*`` go to the GPU
queue (settings.KGPOOL_GPU_QUEUE), the rest to the default queue. Every task is idempotent (acks_late is on:
a task whose worker dies is redelivered): ranking chunks skip work whose result file exists, the merge is an
upsert. Transient failures (database connection, shared storage I/O) are retried explicitly with backoff;
anything else fails the pool at once with the error text.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError

from pooling import task_names

logger = logging.getLogger(__name__)

TRANSIENT = (OperationalError, InterfaceError, OSError)
MAX_RETRIES = 3
T = TypeVar("T")


def _retry_delay(retries: int) -> int:
    return min(60, 5 * 2**retries)


def _run(task: Task, work: Callable[[], T], *, pool_id: int | None = None, context: str = "") -> T:
    """Run a task's work: transient errors are retried with backoff through the broker (inline when the task
    runs eagerly in-process, where there is no broker to re-queue through); when the task gives up, the pool
    it belongs to (if any) is marked failed with the error."""
    inline_attempts = 0
    while True:
        try:
            return work()
        except TRANSIENT as exc:
            attempts = task.request.retries + inline_attempts
            if attempts < task.max_retries:
                if task.request.is_eager:
                    inline_attempts += 1
                    continue
                raise task.retry(exc=exc, countdown=_retry_delay(attempts))
            failure: Exception = exc
        except Exception as exc:
            failure = exc
        if pool_id is not None:
            from pooling.services.pools import mark_pool_failed

            mark_pool_failed(pool_id, f"{context}: {type(failure).__name__}: {failure}")
        raise failure


@shared_task(bind=True, name=task_names.TRAIN_SYSTEM, max_retries=MAX_RETRIES, acks_late=True)
def train_system(self: Task, system_id: int) -> int:
    """Train a pending system (services.systems.train_system)."""
    return _train(self, system_id)


def _train(task: Task, system_id: int) -> int:
    from django.conf import settings

    from pooling.models import System
    from pooling.services.systems import train_system as train_service
    from pooling.services.trainers import TrainingBusyError

    try:
        _run(task, lambda: train_service(System.objects.get(pk=system_id)))
    except TrainingBusyError as exc:  # e.g. redelivered while its first worker still trains it: look again later
        if task.request.is_eager or task.request.retries >= task.max_retries:
            raise
        raise task.retry(exc=exc, countdown=settings.KGPOOL_TRAINING_STALE_S) from None
    return system_id


@shared_task(bind=True, name=task_names.RANK_SYSTEM, max_retries=MAX_RETRIES, acks_late=True)
def rank_system(self: Task, system_id: int, sample_id: int, k: int = 100) -> int:
    """Rank all questions of a sample with a trained system and store the Ranking; returns its id."""
    from pooling.models import Sample, System
    from pooling.services.rankings import rank_system as rank_service

    return _run(self, lambda: rank_service(System.objects.get(pk=system_id), Sample.objects.get(pk=sample_id), k=k).pk)


@shared_task(bind=True, name=task_names.RANK_POOL_CHUNK, max_retries=MAX_RETRIES, acks_late=True)
def rank_pool_chunk(self: Task, pool_id: int, system_id: int, index: int) -> tuple[int, int, int]:
    """One ranking chunk of a pool build (GPU queue). Skips work already done."""
    from pooling.models import Pool, System
    from pooling.services.pools import rank_pool_chunk as chunk_service

    def work() -> Any:
        pool = Pool.objects.select_related("sample__kg").get(pk=pool_id)
        return chunk_service(pool, System.objects.get(pk=system_id), index)

    _run(self, work, pool_id=pool_id, context=f"chunk {index} of system {system_id}")
    return pool_id, system_id, index


@shared_task(bind=True, name=task_names.MERGE_POOL, max_retries=MAX_RETRIES, acks_late=True)
def merge_pool(self: Task, _chunk_results: object, pool_id: int, force: bool = False) -> int:
    """Chord callback: merge the chunks into pool entries (default queue); returns the number of entries."""
    from pooling.models import Pool
    from pooling.services.pools import merge_pool as merge_service

    pool = _run(self, lambda: merge_service(Pool.objects.get(pk=pool_id), force=force), pool_id=pool_id, context="merge")
    return pool.entries.count()


@shared_task(name=task_names.POOL_BUILD_FAILED)
def pool_build_failed(*args: object, pool_id: int) -> None:
    """Error callback of the chord: record the failure on the pool (if a chunk did not already)."""
    from pooling.services.pools import mark_pool_failed

    mark_pool_failed(pool_id, "a task of the pool build failed; see the worker log")


def _run_upload(task: Task, upload_id: int) -> int:
    from pooling.models import Upload
    from pooling.services.uploads import run_upload

    upload = Upload.objects.select_related("kg", "sample").filter(pk=upload_id).first()
    if upload is None:
        return upload_id
    try:
        run_upload(upload)
    except TRANSIENT as exc:  # the row says failed; a retry claims it again
        if task.request.is_eager or task.request.retries >= task.max_retries:
            raise
        Upload.objects.filter(pk=upload_id).update(status=Upload.Status.PENDING)
        raise task.retry(exc=exc, countdown=_retry_delay(task.request.retries)) from None
    return upload_id


@shared_task(bind=True, name=task_names.IMPORT_KG_UPLOAD, max_retries=MAX_RETRIES, acks_late=True)
def import_kg_upload(self: Task, upload_id: int) -> int:
    """Import an uploaded knowledge graph (services.uploads.run_upload; default queue)."""
    return _run_upload(self, upload_id)


@shared_task(bind=True, name=task_names.RANK_SYSTEM_UPLOAD, max_retries=MAX_RETRIES, acks_late=True)
def rank_system_upload(self: Task, upload_id: int) -> int:
    """Import an uploaded score matrix, TREC run or checkpoint as a system (ranks with the engine: GPU queue)."""
    return _run_upload(self, upload_id)


@shared_task(bind=True, name=task_names.TRAIN_REQUESTED_SYSTEM, max_retries=MAX_RETRIES, acks_late=True)
def train_requested_system(self: Task, system_id: int) -> int:
    """Resolve a training asked for through the API into its config, then train it (GPU queue)."""
    from pooling.models import System
    from pooling.services.systems import SystemServiceError, resolve_requested_training

    try:
        resolve_requested_training(System.objects.get(pk=system_id))
    except SystemServiceError:
        return system_id  # marked failed with the reason
    return _train(self, system_id)
