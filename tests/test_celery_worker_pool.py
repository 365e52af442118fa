"""A pool built by a real Celery worker (separate process, real broker, PostgreSQL test database) equals the
in-process build. Runs only with KGPOOL_TEST_BROKER_URL set and DATABASE_URL pointing to PostgreSQL."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from tests._pool_support import import_umls, pool_state, storage, train_tiny  # noqa: F401

BROKER = os.environ.get("KGPOOL_TEST_BROKER_URL", "")
ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def _database_url() -> str:
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "localhost"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{db['NAME']}"


@pytest.fixture
def worker_app(settings):
    if not BROKER:
        pytest.skip("set KGPOOL_TEST_BROKER_URL (e.g. redis://127.0.0.1:6379/15) to run the real-worker test")
    if connection.vendor != "postgresql":
        pytest.skip("the real-worker test needs PostgreSQL (DATABASE_URL=postgres://...): SQLite is one process's")
    from kgpool.celery import app

    keys = ("task_always_eager", "broker_url", "result_backend")
    saved = {key: app.conf[key] for key in keys}
    _reset_connections(app)  # earlier eager tests may have cached a backend / producer pool for the old config
    app.conf.update(task_always_eager=False, broker_url=BROKER, result_backend=BROKER)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield app
    finally:
        _reset_connections(app)
        app.conf.update(**saved)


def _reset_connections(app) -> None:
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None
    app._backend_cache = None
    if hasattr(app._local, "backend"):
        del app._local.backend


def test_pool_built_by_a_real_worker_equals_in_process_build(worker_app, storage, tmp_path):
    from pooling.models import Pool
    from pooling.services.pools import build_pool_now, create_pool, start_pool_build
    from pooling.services.samples import draw_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult"), train_tiny(kg, "transe")]
    sample = draw_sample(kg, size=25, seed=3)
    reference = build_pool_now(create_pool(sample, systems, depth=4, name="in-process", chunk_size=10))

    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": BROKER,
        "CELERY_RESULT_BACKEND": BROKER,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "KGPOOL_STORAGE_DIR": str(storage),
        "DB_CONN_MAX_AGE": "0",
    }
    log = open(tmp_path / "worker.log", "w+")
    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "kgpool", "worker", "-Q", "default,gpu", "-c", "1",
         "--pool", "solo", "-l", "warning", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "-n", f"kgpool-test-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        pool = create_pool(sample, systems, depth=4, name="worker", chunk_size=10)
        assert start_pool_build(pool) is True  # autocommit: on_commit dispatches at once
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pool.refresh_from_db()
            if pool.status in (Pool.Status.DONE, Pool.Status.FAILED) or worker.poll() is not None:
                break
            time.sleep(0.5)
        log.seek(0)
        assert pool.status == Pool.Status.DONE, f"pool {pool.status}: {pool.error}\nworker log:\n{log.read()[-4000:]}"
        assert pool.progress_done == pool.progress_total == 2 * len(range(0, sample.questions.count(), 10))
        entries, hits, _ids = pool_state(pool)
        assert entries and entries == pool_state(reference)[0]
        assert hits == pool_state(reference)[1]
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        log.close()
