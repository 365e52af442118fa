"""A pool built by a real Celery worker (separate process, real broker, PostgreSQL test database) equals the
in-process build. Runs only with KGPOOL_TEST_BROKER_URL set and DATABASE_URL pointing to PostgreSQL."""
from __future__ import annotations

import pytest

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401
from tests._worker_support import (
    BROKER, Worker, require_real_worker, result_backend_url, wait_pool_finished, worker_app,
)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def app(settings):
    require_real_worker()
    with worker_app(settings, BROKER, result_backend_url()) as app:
        yield app


def test_pool_built_by_a_real_worker_equals_in_process_build(app, storage, tmp_path):
    from pooling.models import Pool
    from pooling.services.pools import build_pool_now, create_pool, start_pool_build
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
    sample = draw_sample(kg, size=25, seed=3)
    reference = build_pool_now(create_pool(sample, systems, depth=4, name="in-process", chunk_size=10))

    worker = Worker(app, BROKER, result_backend_url(), storage, tmp_path).start()
    try:
        pool = create_pool(sample, systems, depth=4, name="worker", chunk_size=10)
        assert start_pool_build(pool) is True  # autocommit: on_commit dispatches at once
        wait_pool_finished(pool, 120, [worker])
        assert pool.status == Pool.Status.DONE, f"pool {pool.status}: {pool.error}\nworker log:\n{worker.log()}"
        assert pool.progress_done == pool.progress_total == 2 * len(range(0, sample.questions.count(), 10))
        entries, hits, _ids = pool_state(pool)
        assert entries and entries == pool_state(reference)[0]
        assert hits == pool_state(reference)[1]
    finally:
        worker.stop()
