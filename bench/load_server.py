"""What the judging API's benchmarks share (bench/load_annotation.py, bench/load_published.py): a fresh PostgreSQL
database, the web server on it (``kgpool serve``'s: granian, or gunicorn with ``--server gunicorn``), the server's
CPU time from /proc, timed requests and their statistics, the result tables, and the integrity checks of the stored
judgments."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kgpool.serving import DEFAULT_SERVER, server_command  # no Django: the command line only

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recreate_database(pg: str, name: str, *, drop_only: bool = False) -> str:
    import psycopg

    with psycopg.connect(f"{pg.rstrip('/')}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{pg.rstrip('/')}/{name}"


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), printed beside every figure: latencies do not travel between CPUs."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process (/proc/PID/stat fields 14 and 15); None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class ServerCpu:
    """CPU time of the server side: the web server's main process and workers, and the PostgreSQL backends connected
    to the benchmark's database (persistent connections, CONN_MAX_AGE: one per worker for the whole run). A
    snapshot before and after a level; a backend or worker that ended during the level is missed (counted:
    ``lost``)."""

    def __init__(self, database_url: str, server_pid: int):
        import psycopg

        self.server_pid = server_pid
        self.db_name = database_url.rsplit("/", 1)[1]
        self.conn = psycopg.connect(database_url, autocommit=True)

    def pids(self) -> list[int]:
        return [*self.web_pids(), *self.db_pids()]

    def web_pids(self) -> list[int]:
        return [self.server_pid, *_children(self.server_pid)]

    def db_pids(self) -> list[int]:
        return [row[0] for row in self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid() "
            "AND application_name <> %s", (self.db_name, StandInAutovacuum.APPLICATION))]

    def snapshot(self) -> dict[int, float]:
        seconds = {pid: _process_cpu_seconds(pid) for pid in self.pids()}
        return {pid: s for pid, s in seconds.items() if s is not None}

    @staticmethod
    def spent(before: dict[int, float], after: dict[int, float], only: list[int] | None = None) -> tuple[float, int]:
        """(CPU seconds spent between the snapshots, processes of ``before`` gone by ``after``); ``only``: of
        these processes."""
        chosen = after if only is None else {pid: s for pid, s in after.items() if pid in set(only)}
        return sum(s - before.get(pid, 0.0) for pid, s in chosen.items()), len(set(before) - set(after))

    def close(self) -> None:
        self.conn.close()


class StandInAutovacuum:
    """Where the server runs with autovacuum off (this machine's PostgreSQL does), ANALYZE the whole database once
    (the set-up's bulk load) and the judging tables every ``every`` seconds, as autovacuum would: the runs fill
    them from empty in minutes, and with the statistics of an empty table the planner picks the wrong index (the
    submit's request-id look-up walked every judgment of the user). 0: never; nothing is done where autovacuum is
    on. Its connection is named ``APPLICATION``, which ServerCpu leaves out of the server's CPU."""

    TABLES = "annotation_judgment, annotation_assignment, annotation_item, annotation_labelversion"
    APPLICATION = "kgpool-bench-analyze"

    def __init__(self, database_url: str, every: float) -> None:
        import threading

        import psycopg

        self.stopped = threading.Event()
        self.thread = None
        with psycopg.connect(database_url, autocommit=True, application_name=self.APPLICATION) as conn:
            off = conn.execute("SHOW autovacuum").fetchone()[0] == "off"
            if off and every > 0:
                conn.execute("ANALYZE")
        if off and every > 0:
            print(f"PostgreSQL runs with autovacuum off: the database was analyzed, the judging tables are "
                  f"analyzed every {every:g} s (--analyze-every 0 to skip)", flush=True)
            self.thread = threading.Thread(target=self._run, args=(database_url, every), daemon=True)
            self.thread.start()

    def _run(self, database_url: str, every: float) -> None:
        import psycopg

        with psycopg.connect(database_url, autocommit=True, application_name=self.APPLICATION) as conn:
            while not self.stopped.wait(every):
                conn.execute(f"ANALYZE {self.TABLES}")

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()


def setup_django(database_url: str, var_dir: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["KGPOOL_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()


# --- data ----------------------------------------------------------------------------------------------

class Server:
    """The site served as ``kgpool serve`` serves it (kgpool/serving.py), on a free port of 127.0.0.1."""

    def __init__(self, database_url: str, var_dir: str, workers: int, log: Path, judging_path: str | None = None,
                 server: str = DEFAULT_SERVER):
        self.name = server
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # KGPOOL_COUNT_QUERIES: every response carries its SQL statement count (kgpool.middleware); connections
        # kept for the whole run, so that no PostgreSQL backend ends within a level (ServerCpu would miss its CPU)
        env = {"DB_CONN_MAX_AGE": "3600", **os.environ, "DATABASE_URL": database_url, "KGPOOL_VAR_DIR": var_dir,
               "DEBUG": "false", "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "kgpool.settings",
               "KGPOOL_COUNT_QUERIES": "true"}
        if judging_path is not None:
            env["KGPOOL_JUDGING_PATH"] = judging_path
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(
            server_command(server, "127.0.0.1", self.port, workers, log_level="warning"),
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 60) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; see {self.log.name}")
            try:
                if httpx.get(f"{self.url}/login/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{self.name} did not answer in time")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


# --- simulated annotators ------------------------------------------------------------------------------

@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    errors: list[str] = field(default_factory=list)
    # (token, "hand_out" | "item", id) -> answer of a 2xx submit
    accepted: dict[tuple[str, str, int], str] = field(default_factory=dict)
    accepted_count: int = 0
    requests: int = 0
    queries: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))  # X-Kgpool-Queries


async def timed_post(client, stats: Stats, token: str, endpoint: str, url: str, **kw):
    """POST with the token; latency, status and errors (5xx, 401, 403, transport) go to ``stats``. None on a
    transport error."""
    import httpx

    start = time.perf_counter()
    try:
        response = await client.post(url, headers={"Authorization": f"Token {token}"}, **kw)
    except httpx.HTTPError as exc:
        stats.errors.append(f"{endpoint}: {type(exc).__name__}: {exc}")
        stats.statuses[endpoint][-1] += 1
        return None
    finally:
        stats.requests += 1
    stats.latencies[endpoint].append(time.perf_counter() - start)
    stats.statuses[endpoint][response.status_code] += 1
    if "X-Kgpool-Queries" in response.headers:
        stats.queries[endpoint].append(int(response.headers["X-Kgpool-Queries"]))
    if response.status_code >= 500 or response.status_code in (401, 403):
        stats.errors.append(f"{endpoint}: {response.status_code} {response.text[:200]}")
    return response


async def warm_up(base: str, campaign: str, tokens: list[str], rounds: int) -> None:
    """Read-only requests from many clients at once, so every server worker has opened its database connection
    and run the auth/API code once before anything is measured (a fresh worker's first request is ~10x slower)."""
    import httpx

    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as client:
        for _ in range(rounds):
            await asyncio.gather(*(
                client.get(f"{base}/api/campaigns/{campaign}/progress/", headers={"Authorization": f"Token {token}"})
                for token in tokens
            ))


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def report_level(n: int | str, stats: Stats, elapsed: float,
                 endpoints: tuple[str, ...] = ("next-item", "submit"), cpu_seconds: float | None = None) -> list[str]:
    """Table rows of one level: per endpoint, then all requests with the server's CPU per request (``cpu_seconds``:
    web server + PostgreSQL during the level, see ServerCpu; blank when not measured) and per judged item (accepted
    submit: what one or two requests per item cost together)."""
    lines = []
    for endpoint in endpoints:
        lat = [x * 1000 for x in stats.latencies.get(endpoint, [])]
        codes = " ".join(f"{c}:{k}" for c, k in sorted(stats.statuses.get(endpoint, {}).items()))
        lines.append(f"| {n:>4} | {endpoint:<9} | {len(lat):>6} | {len(lat) / elapsed:>7.1f} | "
                     f"{percentile(lat, 50):>7.1f} | {percentile(lat, 95):>7.1f} | {percentile(lat, 99):>7.1f} | "
                     f"{mean(lat):>7.1f} | {mean(stats.queries.get(endpoint, [])):>7.2f} | {'':>7} | {codes} |")
    every = [q for values in stats.queries.values() for q in values]
    cpu = f"{1000 * cpu_seconds / max(stats.requests, 1):>7.2f}" if cpu_seconds is not None else f"{'':>7}"
    per_item = (f"; {1000 * cpu_seconds / stats.accepted_count:.2f} CPU ms per judged item"
                if cpu_seconds is not None and stats.accepted_count else "")
    lines.append(f"| {n:>4} | all       | {stats.requests:>6} | {stats.requests / elapsed:>7.1f} | "
                 f"{'':>7} | {'':>7} | {'':>7} | {'':>7} | {mean(every):>7.2f} | {cpu} | errors {len(stats.errors)}"
                 f"{per_item} |")
    return lines


TABLE_HEAD = ("| {first} | endpoint  | count  | req/s   | p50 ms  | p95 ms  | p99 ms  | mean ms | queries | CPU ms  | status codes |",
              "|{dash}|-----------|--------|---------|---------|---------|---------|---------|---------|---------|--------------|")


def table_head(first: str) -> list[str]:
    """The header of the result tables: ``queries`` per request (X-Kgpool-Queries), ``CPU ms`` of the server
    (web server + PostgreSQL) per request, on the ``all`` row."""
    return [TABLE_HEAD[0].format(first=first), TABLE_HEAD[1].format(dash="-" * (len(first) + 2))]


def verify(campaign, accepted: dict[tuple[str, str, int], str], token_user: dict[str, int]) -> list[str]:
    from django.db.models import Count, F

    from annotation.models import Item, Judgment

    problems = []
    over = Item.objects.filter(campaign=campaign).annotate(n=Count("judgments")).filter(n__gt=campaign.judgments_per_item)
    if over.exists():
        problems.append(f"{over.count()} item(s) with more than {campaign.judgments_per_item} judgments")
    twice = (Judgment.objects.filter(item__campaign=campaign).values("item_id", "user_id").annotate(n=Count("id"))
             .filter(n__gt=1))
    if twice.exists():
        problems.append(f"{twice.count()} (item, person) pair(s) with two judgments")
    rows = Judgment.objects.filter(item__campaign=campaign).values_list("user_id", "item_id", "assignment_id", "answer")
    by_hand_out = any(kind == "hand_out" for _t, kind, _i in accepted)
    stored = {(u, h if by_hand_out else i): a for u, i, h, a in rows}
    wanted = {(token_user[t], i): a for (t, _kind, i), a in accepted.items()}
    missing = [k for k in wanted if k not in stored]
    differ = [k for k, a in wanted.items() if k in stored and stored[k] != a]
    extra = [k for k in stored if k not in wanted]
    if missing:
        problems.append(f"{len(missing)} accepted submit(s) not stored, e.g. {missing[:3]}")
    if differ:
        problems.append(f"{len(differ)} stored answer(s) differ from the accepted submit")
    if extra:  # not a violation: e.g. a client timeout after the server stored it; the retry would get 200
        print(f"note: {len(extra)} stored judgment(s) whose submit the client never saw answered 2xx")
    inconsistent = Item.objects.filter(campaign=campaign).annotate(n=Count("judgments")).exclude(num_judgments=F("n"))
    if inconsistent.exists():
        problems.append(f"{inconsistent.count()} item(s) whose num_judgments counter differs from their judgments")
    return problems
