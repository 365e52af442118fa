"""Fault: the worker is SIGKILLed in the middle of a pool ranking chunk. With acks_late and
reject_on_worker_lost the chunk's message is delivered again — at once on RabbitMQ (the connection drops), after
the visibility timeout on Redis — and a fresh worker finishes the build: the pool equals the in-process build
(no entry missing, none twice) and every chunk is recorded once.

The worker runner sleeps inside each chunk (tests/_worker_support.py, test-only), so the kill lands while the
chunk is being ranked (RabbitMQ) or after its file is written but before its PoolChunk row exists (Redis).
Runs only with KGPOOL_TEST_BROKER_URL set and DATABASE_URL pointing to PostgreSQL."""
from __future__ import annotations

import time

import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401
from tests._worker_support import (
    AMQP, BROKER, Worker, require_real_worker, result_backend_url, wait_for, wait_pool_finished, worker_app,
)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

VISIBILITY_TIMEOUT = 5  # seconds, Redis only: an unacknowledged task comes back after this
DELAY = 0.4  # seconds the worker sleeps in each of the two phases of a chunk


@pytest.mark.parametrize("broker_kind, kill_phase", [("rabbitmq", "ranking"), ("redis", "saved")])
def test_pool_completes_after_the_worker_is_killed_mid_chunk(broker_kind, kill_phase, settings, storage, tmp_path):
    from pooling.models import Pool, PoolChunk, PoolEntry
    from pooling.services.pools import build_pool_now, create_pool, pool_tasks, start_pool_build
    from pooling.services.samples import draw_sample

    require_real_worker()
    broker = AMQP if broker_kind == "rabbitmq" else BROKER
    if broker_kind == "redis" and not BROKER.startswith("redis"):
        pytest.skip("KGPOOL_TEST_BROKER_URL is not a Redis URL")
    backend = result_backend_url()
    visibility = VISIBILITY_TIMEOUT if broker_kind == "redis" else None

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
    sample = draw_sample(kg, size=12, seed=3)
    reference = build_pool_now(create_pool(sample, systems, depth=4, name="in-process", chunk_size=4))

    with worker_app(settings, broker, backend, visibility_timeout=visibility) as app:
        first = Worker(app, broker, backend, storage, tmp_path, name="first", chunk_delay_s=DELAY,
                       visibility_timeout=visibility).start()
        second = Worker(app, broker, backend, storage, tmp_path, name="second", visibility_timeout=visibility)
        workers = [first, second]
        try:
            pool = create_pool(sample, systems, depth=4, name="killed", chunk_size=4)
            total = len(pool_tasks(pool))
            assert total >= 4
            assert start_pool_build(pool) is True  # autocommit: on_commit dispatches at once

            # kill while a chunk is in `kill_phase`, after at least one chunk is recorded and before the last
            def in_phase() -> bool:  # and far enough from the phase's end that the kill surely lands in it
                done = PoolChunk.objects.filter(pool=pool).count()
                phase = first.phase()
                return phase is not None and phase[0] == kill_phase and phase[2] < DELAY / 2 and 1 <= done < total - 1

            wait_for(in_phase, 90, interval=0.02, describe=lambda: f"worker log:\n{first.log()}", workers=(first,))
            interrupted = first.phase()[1]
            first.kill()
            done_at_kill = set(PoolChunk.objects.filter(pool=pool).values_list("result_file", flat=True))
            assert interrupted not in done_at_kill  # the chunk really was cut off half-way
            assert 1 <= len(done_at_kill) < total
            pool.refresh_from_db()
            assert pool.status == Pool.Status.RUNNING
            killed_at = time.monotonic()

            second.start()
            wait_pool_finished(pool, 90, [second])
            assert pool.status == Pool.Status.DONE, f"pool {pool.status}: {pool.error}"
            if broker_kind == "redis":  # the message only came back after the visibility timeout
                assert time.monotonic() - killed_at >= VISIBILITY_TIMEOUT
            # every chunk exactly once, the interrupted one included
            chunks = list(PoolChunk.objects.filter(pool=pool).values_list("system_id", "index"))
            assert len(chunks) == len(set(chunks)) == total
            assert interrupted in set(PoolChunk.objects.filter(pool=pool).values_list("result_file", flat=True))
            assert pool.progress_done == pool.progress_total == total
            # the entries are the in-process build's: none missing, none twice
            entries, hits, _ids = pool_state(pool)
            ref_entries, ref_hits, _ = pool_state(reference)
            assert entries and entries == ref_entries
            assert hits == ref_hits
            triples = list(PoolEntry.objects.filter(pool=pool).values_list("head_id", "relation_id", "tail_id"))
            assert len(triples) == len(set(triples)) == len(ref_entries)
        finally:
            for worker in workers:
                worker.stop()
