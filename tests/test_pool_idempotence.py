"""Pool builds are deterministic and idempotent: Celery (eager) and in-process agree, re-runs change nothing,
a crashed chunk retried gives no duplicates."""
from __future__ import annotations

import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def counted_rank_rows(monkeypatch, real, error: BaseException | None = None, at: int = 0) -> dict:
    """rankings.rank_rows replaced by ``real`` counting its calls (``["n"]``), raising ``error`` on call ``at``."""
    from pooling.services import rankings

    calls = {"n": 0}

    def counted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == at:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(rankings, "rank_rows", counted)
    return calls


@pytest.fixture
def campaign(storage):
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "complex"), train_tiny(kg, "transe")]
    return draw_sample(kg, size=30, seed=7), systems


def test_celery_chord_and_in_process_builds_agree(campaign, django_capture_on_commit_callbacks):
    from pooling.models import Pool
    from pooling.services.pools import build_pool_now, create_pool, start_pool_build

    sample, systems = campaign
    via_celery = create_pool(sample, systems, depth=4, name="celery", chunk_size=8)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert start_pool_build(via_celery) is True
    assert len(callbacks) == 1
    via_celery.refresh_from_db()
    assert via_celery.status == Pool.Status.DONE, via_celery.error
    chunks_per_system = -(-sample.questions.count() // 8)  # ceil: questions split in chunks of 8
    assert chunks_per_system > 1
    assert via_celery.progress_done == via_celery.progress_total == 3 * chunks_per_system
    in_process = build_pool_now(create_pool(sample, systems, depth=4, name="direct", chunk_size=20))
    celery_entries, celery_hits, _ = pool_state(via_celery)
    assert celery_entries and celery_entries == pool_state(in_process)[0]
    assert celery_hits == pool_state(in_process)[1]
    # asking again for the same pool returns it; a done pool is not rebuilt
    assert create_pool(sample, systems, depth=4, name="celery").pk == via_celery.pk
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert start_pool_build(via_celery) is False
    assert callbacks == []


def test_rerun_of_done_pool_changes_nothing(campaign):
    from pooling.models import PoolChunk
    from pooling.services.pools import build_pool_now, create_pool, merge_pool, rank_pool_chunk

    sample, systems = campaign
    pool = build_pool_now(create_pool(sample, systems, depth=3, chunk_size=16))
    before = pool_state(pool)
    finished = pool.finished_at
    assert build_pool_now(pool).finished_at == finished  # not rebuilt
    assert pool_state(pool) == before
    # forced: every chunk file is found (no work), the merge upserts the same rows (same ids)
    PoolChunk.objects.filter(pool=pool).delete()  # as if killed after writing files, before recording them
    assert rank_pool_chunk(pool, systems[0], 0) is False
    build_pool_now(pool, force=True)
    merge_pool(pool, force=True)
    assert pool_state(pool) == before
    assert PoolChunk.objects.filter(pool=pool).count() == 3 * 4


def test_crashed_chunk_then_retry_gives_no_duplicates(campaign, monkeypatch):
    from pooling.models import Pool, PoolEntry
    from pooling.services import rankings
    from pooling.services.pools import build_pool_now, create_pool

    sample, systems = campaign
    reference = pool_state(build_pool_now(create_pool(sample, systems, depth=4, name="reference", chunk_size=8)))[:2]

    pool = create_pool(sample, systems, depth=4, name="crashy", chunk_size=8)
    real = rankings.rank_rows
    counted_rank_rows(monkeypatch, real, RuntimeError("worker lost"), at=5)
    with pytest.raises(RuntimeError):
        build_pool_now(pool)
    pool.refresh_from_db()
    assert pool.status == Pool.Status.FAILED and "worker lost" in pool.error
    assert pool.progress_done == 4 and pool.entries.count() == 0

    monkeypatch.setattr(rankings, "rank_rows", real)
    build_pool_now(pool)
    pool.refresh_from_db()
    assert pool.status == Pool.Status.DONE and pool.error == ""
    assert pool_state(pool)[:2] == reference
    pairs = PoolEntry.objects.filter(pool=pool).values_list("head", "relation", "tail")
    assert len(pairs) == len(set(pairs))


def test_transient_chunk_error_is_retried_and_permanent_error_fails_the_pool(campaign, monkeypatch, django_capture_on_commit_callbacks):
    from django.db import OperationalError

    from pooling.models import Pool
    from pooling.services import rankings
    from pooling.services.pools import create_pool, start_pool_build

    sample, systems = campaign
    real = rankings.rank_rows
    calls = {"n": 0}

    def drops_connection_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(rankings, "rank_rows", drops_connection_once)
    retried = create_pool(sample, systems, depth=4, name="retried", chunk_size=8)
    with django_capture_on_commit_callbacks(execute=True):
        start_pool_build(retried)
    retried.refresh_from_db()
    assert retried.status == Pool.Status.DONE, retried.error
    assert calls["n"] == retried.progress_total + 1  # one chunk ran twice

    def broken(*args, **kwargs):
        raise ValueError("scores contain the wrong number of entities")

    monkeypatch.setattr(rankings, "rank_rows", broken)
    failed = create_pool(sample, systems, depth=4, name="failed", chunk_size=8)
    with pytest.raises(ValueError), django_capture_on_commit_callbacks(execute=True):
        start_pool_build(failed)
    failed.refresh_from_db()
    assert failed.status == Pool.Status.FAILED
    assert any(failed.error.startswith(f"chunk 0 of system {system.pk}: ValueError: scores contain") for system in systems)


def test_an_interrupted_build_is_marked_failed_and_finishes_when_run_again(campaign, monkeypatch):
    """Ctrl-C (or SIGTERM, which the commands turn into it) during an in-process build: the pool does not stay
    "running"; it says it was interrupted, and building it again finishes it from the chunks done."""
    from pooling.models import Pool
    from pooling.services import rankings
    from pooling.services.pools import INTERRUPTED, build_pool_now, create_pool, pool_tasks

    sample, systems = campaign
    pool = create_pool(sample, systems, depth=4, name="interrupted", chunk_size=8)
    real = rankings.rank_rows
    counted_rank_rows(monkeypatch, real, KeyboardInterrupt(), at=3)
    with pytest.raises(KeyboardInterrupt):
        build_pool_now(pool)
    pool.refresh_from_db()
    assert pool.status == Pool.Status.FAILED and pool.error == INTERRUPTED and pool.progress_done == 2
    resumed = counted_rank_rows(monkeypatch, real)
    assert build_pool_now(pool).status == Pool.Status.DONE
    assert resumed["n"] == len(pool_tasks(pool)) - 2  # the two chunks done before the interruption are kept
