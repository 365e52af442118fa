"""The web site's production server: the command line that starts it, in one place for ``kgpool serve``, the
deployment docs and the load benchmarks (bench/load_server.py).

granian, an HTTP server written in Rust, is the default: at 50 annotators it spends 0.5 ms less CPU per judging
request than gunicorn's sync workers (about an eighth of the fast path's, README "Judging API load"), and its
p50 is a millisecond lower. gunicorn, the earlier default, stays installed and selectable (``--server gunicorn``),
so deployments that start it themselves keep working. Both run the same WSGI application, one request at a time
per worker process, as many workers as given: each holds one database connection.
"""
from __future__ import annotations

import os
import sys

APPLICATION = "kgpool.wsgi:application"
SERVERS = ("granian", "gunicorn")
DEFAULT_SERVER = "granian"
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def default_workers() -> int:
    """gunicorn's advice for synchronous workers, two per core and one: requests that wait for PostgreSQL leave
    the core to another worker."""
    return 2 * (os.cpu_count() or 1) + 1


def split_bind(bind: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) -> (host, port); ValueError with what is wrong."""
    host, sep, port = bind.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{bind!r}: give HOST:PORT, e.g. 127.0.0.1:8000, with a port from 1 to 65535")
    return host, int(port)


def server_command(server: str, host: str, port: int, workers: int, *, log_level: str = "info",
                   python: str = sys.executable) -> list[str]:
    """The command line that serves the site with ``server`` on ``host:port``."""
    if server == "granian":
        # WSGI, one thread per worker (as a sync worker); workers that die are started again (not by default)
        return [python, "-m", "granian", "--interface", "wsgi", "--host", host, "--port", str(port),
                "--workers", str(workers), "--blocking-threads", "1", "--backlog", "2048",
                "--respawn-failed-workers", "--log-level", log_level, APPLICATION]
    if server == "gunicorn":
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return [python, "-m", "gunicorn", APPLICATION, "--bind", bind, "--workers", str(workers),
                "--backlog", "2048", "--timeout", "60", "--log-level", log_level]
    raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")
