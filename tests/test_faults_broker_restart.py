"""Fault: the broker restarts while a pool is being built (each test starts a broker of its own, on a free port,
so the shared services other people use are never touched).

- RabbitMQ (stop_app / start_app: every connection drops; Celery's queues are durable and its messages
  persistent): the same worker reconnects by itself and the build completes; the chunk whose acknowledgement
  was lost runs again and is skipped as done; the pool equals the in-process build.
- Redis started with nothing on disk (``--save ""``, as here): a restart loses every queued message and the
  chord's state, so no worker can resume them. What "resume" means there: the worker reconnects, and asking
  for the build again (``start_pool_build`` on the unfinished pool) completes it idempotently — finished chunks
  are skipped, every chunk is recorded once, and the pool equals the in-process build.
Runs only with KGPOOL_TEST_BROKER_URL set and DATABASE_URL pointing to PostgreSQL."""
from __future__ import annotations

import time

import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401
from tests._worker_support import (
    PrivateRabbit, PrivateRedis, Worker, require_real_worker, result_backend_url, wait_for, wait_pool_finished,
    worker_app,
)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

DELAY = 0.3  # seconds the worker sleeps in each of the two phases of a chunk


def _pools(sample, systems):
    from pooling.services.pools import build_pool_now, create_pool

    reference = build_pool_now(create_pool(sample, systems, depth=4, name="in-process", chunk_size=4))
    return reference, create_pool(sample, systems, depth=4, name="restarted", chunk_size=4)


def _assert_complete(pool, reference, total) -> None:
    from pooling.models import Pool, PoolChunk

    assert pool.status == Pool.Status.DONE, f"pool {pool.status}: {pool.error}"
    chunks = list(PoolChunk.objects.filter(pool=pool).values_list("system_id", "index"))
    assert len(chunks) == len(set(chunks)) == total
    assert pool.progress_done == pool.progress_total == total
    entries, hits, ids = pool_state(pool)
    assert entries and entries == pool_state(reference)[0] and len(ids) == len(entries)
    assert hits == pool_state(reference)[1]


def _some_chunks_done(worker, pool, total):
    from pooling.models import PoolChunk

    def ready() -> bool:
        phase = worker.phase()
        return (phase is not None and phase[0] == "ranking" and phase[2] < DELAY / 2
                and 1 <= PoolChunk.objects.filter(pool=pool).count() < total - 2)

    wait_for(ready, 90, interval=0.02, workers=(worker,), describe=worker.log)


def test_rabbitmq_restart_worker_reconnects_and_build_completes(settings, storage, tmp_path):
    from pooling.services.pools import pool_tasks, start_pool_build
    from pooling.services.samples import draw_sample

    require_real_worker()
    backend = result_backend_url()
    rabbit = PrivateRabbit()
    try:
        try:
            rabbit.start()
        except Exception as exc:  # noqa: BLE001
            pytest.skip(f"cannot start a private RabbitMQ node: {exc}")
        kg = import_umls()
        systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
        reference, pool = _pools(draw_sample(kg, size=12, seed=3), systems)
        total = len(pool_tasks(pool))
        with worker_app(settings, rabbit.url, backend) as app:
            worker = Worker(app, rabbit.url, backend, storage, tmp_path, chunk_delay_s=DELAY).start()
            try:
                assert start_pool_build(pool) is True
                _some_chunks_done(worker, pool, total)
                rabbit.restart(down_s=1.0)
                assert worker.alive()
                wait_pool_finished(pool, 90, [worker])
                _assert_complete(pool, reference, total)
                assert worker.alive()  # the same worker, reconnected
                assert "Connection to broker lost" in worker.log(100_000) or "reconnect" in worker.log(100_000).lower()
            finally:
                worker.stop()
    finally:
        rabbit.close()


def test_redis_restart_loses_queued_tasks_and_a_new_dispatch_completes_the_build(settings, storage, tmp_path):
    from pooling.models import Pool, PoolChunk
    from pooling.services.pools import pool_tasks, start_pool_build
    from pooling.services.samples import draw_sample

    require_real_worker()
    redis = PrivateRedis()
    try:
        redis.start()
        kg = import_umls()
        systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
        reference, pool = _pools(draw_sample(kg, size=12, seed=3), systems)
        total = len(pool_tasks(pool))
        with worker_app(settings, redis.url, redis.url) as app:
            worker = Worker(app, redis.url, redis.url, storage, tmp_path, chunk_delay_s=DELAY).start()
            try:
                assert start_pool_build(pool) is True
                _some_chunks_done(worker, pool, total)
                redis.restart(down_s=0.5)
                # the chunk in progress finishes; everything still queued is gone with the restart
                wait_for(lambda: worker.phase() is None, 30, workers=(worker,), describe=worker.log)
                time.sleep(2 * DELAY + 1)
                pool.refresh_from_db()
                done = PoolChunk.objects.filter(pool=pool).count()
                assert pool.status != Pool.Status.DONE and done < total, (pool.status, done)
                assert worker.alive()

                # resume: dispatch the build again; the same (reconnected) worker completes it
                assert start_pool_build(pool) is True
                wait_pool_finished(pool, 90, [worker])
                _assert_complete(pool, reference, total)
                assert worker.alive()
            finally:
                worker.stop()
    finally:
        redis.close()
