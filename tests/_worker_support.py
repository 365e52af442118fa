"""Real Celery workers for the tests (not collected: the name does not start with test_).

- :func:`worker_app` points the test process's Celery app at a real broker / result backend (and back), with
  queue names private to the test run, so a worker of another test run on the same broker never takes our tasks.
- :class:`Worker` runs ``python -m tests._worker_support`` (below) as a subprocess against the test database:
  a plain ``celery worker`` (solo pool, one task at a time) on those private queues. With
  ``KGPOOL_TEST_CHUNK_DELAY_S`` set it sleeps inside every pool ranking chunk, before and after writing the
  chunk file, and writes which phase it is in to ``KGPOOL_TEST_MARKER`` — so a test can kill the worker
  exactly while a chunk is in progress. The hook lives here, in the test-only runner: the product has none.
- :class:`PrivateRedis` / :class:`PrivateRabbit` start brokers of their own on free ports, for tests that
  restart a broker without disturbing anyone else using the shared services.

Runs only with KGPOOL_TEST_BROKER_URL set and DATABASE_URL pointing to PostgreSQL (:func:`require_real_worker`).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
BROKER = os.environ.get("KGPOOL_TEST_BROKER_URL", "")
AMQP = os.environ.get("KGPOOL_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
GPU_ROUTES = ("pooling.tasks.train_*", "pooling.tasks.rank_*")


# ---------------------------------------------------------------------------------------- gating / config
def require_real_worker() -> None:
    """Skip unless a broker is configured for worker tests and the test database is PostgreSQL."""
    import pytest
    from django.db import connection

    if not BROKER:
        pytest.skip("set KGPOOL_TEST_BROKER_URL (e.g. redis://127.0.0.1:6379/15) to run the real-worker tests")
    if connection.vendor != "postgresql":
        pytest.skip("the real-worker tests need PostgreSQL (DATABASE_URL=postgres://...): SQLite is one process's")


def result_backend_url() -> str:
    """The result backend of the worker tests: chords need one that counts chord parts (Redis)."""
    url = os.environ.get("KGPOOL_TEST_RESULT_URL") or BROKER
    if not url.startswith("redis"):
        import pytest

        pytest.skip("the worker tests need a Redis result backend (KGPOOL_TEST_RESULT_URL or a redis broker URL)")
    return url


def database_url() -> str:
    """URL of the test database (the one pytest-django created) for a worker subprocess."""
    from django.db import connection

    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "localhost"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{db['NAME']}"


def queue_names(prefix: str) -> tuple[str, str]:
    """(default queue, GPU queue) of a test run."""
    return f"{prefix}default", f"{prefix}gpu"


def _configure_queues(app, prefix: str) -> tuple[str, str]:
    default, gpu = queue_names(prefix)
    app.conf.update(task_default_queue=default, task_routes={pattern: {"queue": gpu} for pattern in GPU_ROUTES})
    app.__dict__.pop("amqp", None)  # the router and queue table are cached on app.amqp: rebuild them
    return default, gpu


def reset_connections(app) -> None:
    """Forget Celery's cached broker pool, producers and result backend (they hold the old URLs). The broker
    pools live in kombu's process-wide registry (``app.pool`` is ``kombu.pools.connections[...]``): closing one
    there without removing it would hand the closed pool to the next eager ``apply_async`` of the same URL
    ("Acquire on closed pool"), so the registry is emptied as well."""
    from kombu import pools

    app._pool = None
    pools.reset()  # closes every registered connection / producer pool and forgets them
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None
    for backend in {id(b): b for b in (app._backend_cache, getattr(app._local, "backend", None)) if b}.values():
        _close_result_backend(backend)
    app._backend_cache = None
    if hasattr(app._local, "backend"):
        del app._local.backend


def _close_result_backend(backend) -> None:
    """Close a Redis result backend's pub/sub consumer and forget what it subscribed to. Each ``apply_async``
    subscribes its task's result; an AsyncResult collected later unsubscribes it, and on a private Redis that
    is stopped by then that meant reconnect retries (a later test stalled 19 s) ending in an exception raised
    from ``__del__`` (PytestUnraisableExceptionWarning)."""
    consumer = getattr(backend, "result_consumer", None)
    if consumer is not None and hasattr(consumer, "subscribed_to"):
        consumer.subscribed_to.clear()  # a later cancel_for() of a forgotten task then sends nothing
        try:
            consumer.stop()
        except Exception:  # noqa: BLE001 - its server may be gone already: closing is all we want
            pass
        consumer._pubsub = None
    client = getattr(backend, "client", None)
    if client is not None and hasattr(client, "connection_pool"):
        client.connection_pool.disconnect()


@contextlib.contextmanager
def worker_app(settings, broker: str, backend: str, *, visibility_timeout: int | None = None,
               prefix: str | None = None) -> Iterator[object]:
    """The Celery app of this process sending to ``broker`` (not eager) on private queues; restored after."""
    from kgpool.celery import app

    keys = ("task_always_eager", "broker_url", "result_backend", "broker_transport_options",
            "task_default_queue", "task_routes")
    saved = {key: app.conf[key] for key in keys}
    reset_connections(app)  # earlier eager tests may have cached a backend / producer pool for the old config
    options = dict(saved["broker_transport_options"] or {})
    if visibility_timeout is not None:
        options["visibility_timeout"] = visibility_timeout  # as kgpool.settings derives it from the env
        options["unacked_restore_interval"] = max(1, min(10, visibility_timeout))
    app.conf.update(task_always_eager=False, broker_url=broker, result_backend=backend,
                    broker_transport_options=options)
    app.kgpool_test_prefix = prefix or f"kgpool-test-{os.getpid()}-{int(time.time() * 1000) % 10**8}-"
    _configure_queues(app, app.kgpool_test_prefix)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield app
    finally:
        if broker.startswith("amqp"):
            _delete_queues(app, queue_names(app.kgpool_test_prefix))
        reset_connections(app)
        app.conf.update(**saved)
        app.__dict__.pop("amqp", None)


def _delete_queues(app, names: tuple[str, ...]) -> None:
    """Remove a test run's queues from a shared RabbitMQ (best effort)."""
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
            channel = conn.channel()
            for name in names:
                channel.queue_delete(name)
    except Exception:  # noqa: BLE001 - cleanup only
        pass


# ---------------------------------------------------------------------------------------- the worker
class Worker:
    """A Celery worker subprocess (``python -m tests._worker_support``) on the test database and private queues."""

    def __init__(self, app, broker: str, backend: str, storage: Path, log_dir: Path, *, name: str = "w",
                 chunk_delay_s: float = 0.0, visibility_timeout: int | None = None) -> None:
        self.log_path = log_dir / f"worker-{name}.log"
        self.marker = log_dir / f"worker-{name}.marker"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker,
            "CELERY_RESULT_BACKEND": backend,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "KGPOOL_STORAGE_DIR": str(storage),
            "DB_CONN_MAX_AGE": "0",
            "KGPOOL_TEST_QUEUE_PREFIX": app.kgpool_test_prefix,
            "KGPOOL_TEST_CHUNK_DELAY_S": str(chunk_delay_s),
            "KGPOOL_TEST_MARKER": str(self.marker),
            "PYTHONUNBUFFERED": "1",
        }
        if visibility_timeout is not None:
            self.env["CELERY_VISIBILITY_TIMEOUT"] = str(visibility_timeout)
        self.name = f"{app.kgpool_test_prefix}{name}@%h"
        self.process: subprocess.Popen | None = None

    def start(self) -> "Worker":
        self.marker.unlink(missing_ok=True)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests._worker_support", "-n", self.name],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def phase(self) -> tuple[str, str, float] | None:
        """(phase, chunk file, seconds since it began) the worker is in inside a ranking chunk (``ranking``:
        computing, ``saved``: the file is written, ``recording``: about to record the PoolChunk row), or None
        between chunks. Only with ``chunk_delay_s``: each of the first two phases lasts that long."""
        try:
            text = self.marker.read_text().strip()
        except OSError:
            return None
        if not text:
            return None
        phase, relative, since = text.split(" ")
        return phase, relative, time.time() - float(since)

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, no acknowledgement, nothing flushed."""
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if not self.alive():
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def log(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""


def wait_for(predicate: Callable[[], bool], timeout: float, *, interval: float = 0.05,
             describe: Callable[[], str] = lambda: "", workers: tuple[Worker, ...] = ()) -> None:
    """Poll ``predicate`` until true; fail after ``timeout`` s, or at once when one of ``workers`` exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        for worker in workers:
            if worker.process is not None and not worker.alive():
                raise AssertionError(f"worker {worker.name} exited ({worker.process.returncode}):\n{worker.log()}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting\n{describe()}")


def wait_pool_finished(pool, timeout: float, workers: list[Worker], *, watch: bool = True) -> None:
    from pooling.models import Pool

    def finished() -> bool:
        pool.refresh_from_db()
        return pool.status in (Pool.Status.DONE, Pool.Status.FAILED)

    wait_for(finished, timeout, interval=0.2, workers=tuple(workers) if watch else (),
             describe=lambda: f"pool {pool.status} {pool.progress_done}/{pool.progress_total}: {pool.error}\n"
             + "\n".join(f"--- {w.name} log:\n{w.log()}" for w in workers))


# ---------------------------------------------------------------------------------------- private brokers
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class PrivateRedis:
    """``redis-server`` on a free port, keeping nothing on disk; restart() loses every key (as a crash does)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="kgpool-redis-"))
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "PrivateRedis":
        subprocess.run(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "yes", "--dir", str(self.dir), "--logfile", str(self.dir / "redis.log"),
             "--pidfile", str(self.dir / "redis.pid")],
            check=True, capture_output=True,
        )
        wait_for(lambda: port_open(self.port), 20, interval=0.05)
        return self

    def stop(self) -> None:
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True)
        wait_for(lambda: not port_open(self.port), 20, interval=0.05)

    def restart(self, down_s: float = 1.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if port_open(self.port):
                self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateRabbit:
    """A RabbitMQ node of its own (name, ports, data under a temp dir); restart() is stop_app / start_app."""

    def __init__(self) -> None:
        self.port, self.dist_port = free_port(), free_port()
        self.node = f"kgpooltest{os.getpid()}x{self.port}@localhost"
        self.dir = Path(tempfile.mkdtemp(prefix="kgpool-rabbit-"))
        self.dir.chmod(0o777)  # the server may run as the rabbitmq user
        (self.dir / "enabled_plugins").write_text("[].\n")
        (self.dir / "enabled_plugins").chmod(0o666)
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self.env = {
            **os.environ, "RABBITMQ_NODENAME": self.node, "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port), "RABBITMQ_MNESIA_BASE": str(self.dir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "log"), "RABBITMQ_PID_FILE": str(self.dir / "pid"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "none"),
        }

    def ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(["rabbitmqctl", "-n", self.node, *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def start(self, timeout: float = 60) -> "PrivateRabbit":
        if not shutil.which("rabbitmq-server"):
            raise RuntimeError("rabbitmq-server is not installed")
        subprocess.run(["rabbitmq-server", "-detached"], env=self.env, check=True, capture_output=True, timeout=60)
        wait_for(lambda: port_open(self.port), timeout, interval=0.2,
                 describe=lambda: f"RabbitMQ node {self.node} did not open port {self.port}")
        return self

    def restart(self, down_s: float = 1.0) -> None:
        """Stop the broker application (every connection drops) and start it again; durable queues and
        persistent messages survive."""
        stopped = self.ctl("stop_app")
        assert stopped.returncode == 0, stopped.stderr
        time.sleep(down_s)
        started = self.ctl("start_app")
        assert started.returncode == 0, started.stderr
        wait_for(lambda: port_open(self.port), 30, interval=0.1)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ctl("stop", timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------- the runner
def _slow_chunks(delay: float, marker: Path) -> None:
    """Test-only: make every pool ranking chunk take ``2 * delay`` seconds and publish its phase."""
    import pooling.services.pools as pools

    save_arrays = pools.save_arrays

    def write(text: str) -> None:
        temp = marker.with_suffix(".tmp")
        temp.write_text(f"{text} {time.time()!r}" if text else "")
        os.replace(temp, marker)

    def slow_save_arrays(relative: str, **arrays):
        write(f"ranking {relative}")  # the ranks are computed, the file is not written yet
        time.sleep(delay)
        result = save_arrays(relative, **arrays)
        write(f"saved {relative}")  # the file is written, the PoolChunk row not yet
        time.sleep(delay)
        write(f"recording {relative}")
        return result

    def chunk_service(*args, **kwargs):
        try:
            return rank_pool_chunk(*args, **kwargs)
        finally:
            write("")

    rank_pool_chunk = pools.rank_pool_chunk
    pools.save_arrays = slow_save_arrays
    pools.rank_pool_chunk = chunk_service


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from kgpool.celery import app

    default, gpu = _configure_queues(app, os.environ["KGPOOL_TEST_QUEUE_PREFIX"])
    delay = float(os.environ.get("KGPOOL_TEST_CHUNK_DELAY_S") or 0)
    if delay > 0:
        _slow_chunks(delay, Path(os.environ["KGPOOL_TEST_MARKER"]))
    # One task at a time. The threads pool, not solo: a solo worker on RabbitMQ stalls ~10 s between some
    # deliveries (py-amqp frames left in its buffer wait for the next timer of the event loop).
    app.worker_main(["worker", "-Q", f"{default},{gpu}", "-c", "1",
                     "--pool", os.environ.get("KGPOOL_TEST_WORKER_POOL", "threads"),
                     "-l", os.environ.get("KGPOOL_TEST_WORKER_LOGLEVEL", "warning"),
                     "--without-gossip", "--without-mingle", "--without-heartbeat", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
