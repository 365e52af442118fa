"""Load benchmark of the judging API (issue 6): simulated annotators against gunicorn on PostgreSQL.

    .venv/bin/pip install -r bench/requirements-load.txt
    .venv/bin/python bench/load_annotation.py                      # 10, 50, 200 annotators, 20 s each
    .venv/bin/python bench/load_annotation.py --levels 50 --seconds 30 --think 2   # the README figures

What it does: creates a fresh PostgreSQL database (``--db``, dropped first; PostgreSQL from ``--pg``), migrates,
imports the bundled UMLS dataset, samples test triples and pools ``--items`` candidate triples directly (no
model training: the benchmark is about the web layer), creates a campaign and, per level, N annotators with
API tokens. It starts gunicorn on 127.0.0.1 (``--workers``, default one per core) with DATABASE_URL set and runs
N simulated annotators per level, each looping next-item -> submit (Y/N + an allow-listed source URL) for
``--seconds`` (and at most ``--max-requests`` requests each). It prints requests/s and p50/p95/p99 latency per
endpoint and the errors, then checks the database: no item with more than two judgments, no person with two
judgments of one item, every accepted submit (2xx) stored exactly once. Loopback only; the server is stopped
and (unless ``--keep``) the database dropped at the end. Exit status 1 on any violation.

``--published``: the replay of the published FB15k-237 campaign (``--shared-data``/fb15k-237-pooled), same
database and server set-up:

    .venv/bin/python bench/load_annotation.py --published                    # all 21,469 pool items
    .venv/bin/python bench/load_annotation.py --published --limit-items 500  # a quick run

In-process it imports FB15k-237, the published sample (sample.txt, checked against sample_idxs.txt and the
seed-42 sample) and the published pool with ``import_pool`` (every line of judgments.tsv that is not a sampled
triple; ``--limit-items N``: only the entries answering the questions of the first sampled triples, at least
N), and creates a double-annotation campaign without trivial filtering, gold checks or reused labels (people
judge every entry, so the export can be compared line by line; the cardinality filter would label one
published Y as N, tests/test_annotation_published.py), two annotators and an adjudicator with API tokens.
Over HTTP the two annotators loop next-item -> submit at the same time, answering with the label of the
handed-out triple in judgments.tsv; annotator two flips it on a seeded ``--wrong-rate`` of the items
(``--seed``). Then the adjudicator takes every conflict (next-adjudication -> adjudication) and decides it
with the published label. The campaign's ``labels`` export (``export_judgments``) is compared with the
published lines (the sampled triples + the replayed pool). It prints a progress line every ``--progress``
seconds, then the submits, conflicts (disagreements and consistency-flagged agreements), adjudications,
requests/s and latency percentiles per endpoint, the equal / different / missing / extra lines, and the
integrity checks of the load run plus: every item decided, every conflict adjudicated once as sent, exactly
the seeded wrong answers disagreeing. Exit status 0 only when the export equals the published labels and
nothing is violated.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOURCES = ("https://en.wikipedia.org/wiki/Load_test_{n}", "https://www.wikidata.org/wiki/Q{n}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _recreate_database(pg: str, name: str, *, drop_only: bool = False) -> str:
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
    """CPU time of the server side: the gunicorn master and workers, and the PostgreSQL backends connected to the
    benchmark's database (persistent connections, CONN_MAX_AGE: one per worker for the whole run). A snapshot
    before and after a level; a backend or worker that ended during the level is missed (counted: ``lost``)."""

    def __init__(self, database_url: str, gunicorn_pid: int):
        import psycopg

        self.gunicorn_pid = gunicorn_pid
        self.db_name = database_url.rsplit("/", 1)[1]
        self.conn = psycopg.connect(database_url, autocommit=True)

    def pids(self) -> list[int]:
        return [*self.web_pids(), *self.db_pids()]

    def web_pids(self) -> list[int]:
        return [self.gunicorn_pid, *_children(self.gunicorn_pid)]

    def db_pids(self) -> list[int]:
        return [row[0] for row in self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (self.db_name,))]

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


def _setup_django(database_url: str, var_dir: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["KGPOOL_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()


# --- data ----------------------------------------------------------------------------------------------

def build_campaign(items: int, seed: int):
    """UMLS imported, a sample of its test triples, a pool of ``items`` candidate triples that are in no split."""
    import numpy as np
    from django.core.management import call_command

    from annotation.services.campaigns import create_campaign
    from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, Relation
    from pooling.selectors.kg import kg_triples
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import create_sample

    call_command("migrate", verbosity=0, interactive=False)
    kg = KnowledgeGraph.objects.filter(name="umls").first() or import_kg("umls", ROOT / "datasets" / "umls")
    splits = kg_triples(kg)
    known = {tuple(map(int, t)) for part in splits.values() for t in part}
    sample = create_sample(kg, name="load", method="file", seed=None, indices=list(range(min(200, len(splits["test"])))))
    pool = Pool.objects.create(sample=sample, name="load-pool", depth=10, origin=Pool.Origin.IMPORTED,
                               status=Pool.Status.DONE)
    entity = dict(Entity.objects.filter(kg=kg).values_list("index", "pk"))
    relation = dict(Relation.objects.filter(kg=kg).values_list("index", "pk"))
    rng = np.random.default_rng(seed)
    chosen: set[tuple[int, int, int]] = set()
    while len(chosen) < items:
        h, t = (int(x) for x in rng.integers(0, len(entity), 2))
        r = int(rng.integers(0, len(relation)))
        if h != t and (h, r, t) not in known:
            chosen.add((h, r, t))
    PoolEntry.objects.bulk_create(
        [PoolEntry(pool=pool, head_id=entity[h], relation_id=relation[r], tail_id=entity[t], depth=1)
         for h, r, t in sorted(chosen)], batch_size=5000)
    return create_campaign("load", pool, seed=seed, reuse=False, gold_rate=0.0)


def make_annotators(campaign, prefix: str, count: int) -> list[str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.services.campaigns import add_member

    tokens = []
    for i in range(count):
        user = get_user_model().objects.create_user(f"{prefix}{i}", password=None)
        add_member(campaign, user, "annotator")
        tokens.append(Token.objects.create(user=user).key)
    return tokens


# --- server --------------------------------------------------------------------------------------------

class Server:
    def __init__(self, database_url: str, var_dir: str, workers: int, log: Path, judging_path: str | None = None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # KGPOOL_COUNT_QUERIES: every response carries its SQL statement count (kgpool.middleware); connections
        # kept for the whole run, so that no PostgreSQL backend ends within a level (ServerCpu would miss its CPU)
        env = {"DB_CONN_MAX_AGE": "3600", **os.environ, "DATABASE_URL": database_url, "KGPOOL_VAR_DIR": var_dir,
               "DEBUG": "false", "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "kgpool.settings",
               "KGPOOL_COUNT_QUERIES": "true"}
        if judging_path is not None:
            env["KGPOOL_JUDGING_PATH"] = judging_path
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(
            [str(gunicorn), "kgpool.wsgi:application", "--bind", f"127.0.0.1:{self.port}", "--workers", str(workers),
             "--backlog", "2048", "--timeout", "60", "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 60) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}; see {self.log.name}")
            try:
                if httpx.get(f"{self.url}/login/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer in time")

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


async def annotator(client, base: str, campaign: str, token: str, stats: Stats, deadline: float, max_requests: int,
                    rng: random.Random, think: float = 0.0) -> None:
    async def call(endpoint: str, url: str, **kw):
        return await timed_post(client, stats, token, endpoint, url, **kw)

    if think:  # ramp-up: annotators arrive over the first think period instead of all in the same millisecond
        await asyncio.sleep(rng.uniform(0, think))
    made = 0
    while time.monotonic() < deadline and made < max_requests:
        made += 1
        handed = await call("next-item", f"{base}/api/campaigns/{campaign}/next-item/")
        if handed is None or handed.status_code != 200:
            continue
        body = handed.json()
        if body["item"] is None:
            return
        # Work is addressed by its hand-out id (older API versions: by the item id).
        hand_out = body.get("hand_out")
        key = ("hand_out", hand_out) if hand_out is not None else ("item", body["item"]["id"])
        path = f"hand-outs/{hand_out}" if hand_out is not None else f"items/{key[1]}"
        if think:  # reading the item and looking for a source: uniform in [think/2, 3*think/2]
            await asyncio.sleep(rng.uniform(think / 2, 3 * think / 2))
        if time.monotonic() >= deadline or made >= max_requests:
            return
        made += 1
        answer = rng.choice("YN")
        source = rng.choice(SOURCES).format(n=rng.randrange(10**6))
        response = await call("submit", f"{base}/api/campaigns/{campaign}/{path}/judgment/",
                              json={"answer": answer, "source_url": source, "request_id": body["request_id"]})
        if response is not None and response.status_code in (200, 201):
            key = (token, *key)
            if response.status_code == 201:
                stats.accepted_count += 1
            stats.accepted[key] = answer


async def run_level(base: str, campaign: str, tokens: list[str], seconds: float, max_requests: int, seed: int,
                    think: float = 0.0) -> tuple[Stats, float]:
    import httpx

    stats = Stats()
    limits = httpx.Limits(max_connections=len(tokens) + 10, max_keepalive_connections=len(tokens) + 10)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0)) as client:
        start = time.monotonic()
        deadline = start + seconds
        await asyncio.gather(*(annotator(client, base, campaign, token, stats, deadline, max_requests,
                                         random.Random(seed * 1000 + i), think) for i, token in enumerate(tokens)))
        elapsed = time.monotonic() - start
    return stats, elapsed


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


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def report_level(n: int | str, stats: Stats, elapsed: float,
                 endpoints: tuple[str, ...] = ("next-item", "submit"), cpu_seconds: float | None = None) -> list[str]:
    """Table rows of one level: per endpoint, then all requests with the server's CPU per request (``cpu_seconds``:
    gunicorn + PostgreSQL during the level, see ServerCpu; blank when not measured)."""
    lines = []
    for endpoint in endpoints:
        lat = [x * 1000 for x in stats.latencies.get(endpoint, [])]
        codes = " ".join(f"{c}:{k}" for c, k in sorted(stats.statuses.get(endpoint, {}).items()))
        lines.append(f"| {n:>4} | {endpoint:<9} | {len(lat):>6} | {len(lat) / elapsed:>7.1f} | "
                     f"{percentile(lat, 50):>7.1f} | {percentile(lat, 95):>7.1f} | {percentile(lat, 99):>7.1f} | "
                     f"{_mean(lat):>7.1f} | {_mean(stats.queries.get(endpoint, [])):>7.2f} | {'':>7} | {codes} |")
    every = [q for values in stats.queries.values() for q in values]
    cpu = f"{1000 * cpu_seconds / max(stats.requests, 1):>7.2f}" if cpu_seconds is not None else f"{'':>7}"
    lines.append(f"| {n:>4} | all       | {stats.requests:>6} | {stats.requests / elapsed:>7.1f} | "
                 f"{'':>7} | {'':>7} | {'':>7} | {'':>7} | {_mean(every):>7.2f} | {cpu} | errors {len(stats.errors)} |")
    return lines


TABLE_HEAD = ("| {first} | endpoint  | count  | req/s   | p50 ms  | p95 ms  | p99 ms  | mean ms | queries | CPU ms  | status codes |",
              "|{dash}|-----------|--------|---------|---------|---------|---------|---------|---------|---------|--------------|")


def table_head(first: str) -> list[str]:
    """The header of the result tables: ``queries`` per request (X-Kgpool-Queries), ``CPU ms`` of the server
    (gunicorn + PostgreSQL) per request, on the ``all`` row."""
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


def main_load(args) -> int:
    pg = args.pg
    database_url = _recreate_database(pg, args.db)
    var_dir = tempfile.mkdtemp(prefix="kgpool-load-")
    _setup_django(database_url, var_dir)
    from django.contrib.auth import get_user_model
    from django.db import connections
    from rest_framework.authtoken.models import Token

    t0 = time.monotonic()
    campaign = build_campaign(args.items, args.seed)
    paths = args.paths or [None]  # None: the server's default judging path
    all_tokens = {(path, n): make_annotators(campaign, f"load-{path or 'default'}-{n}-", n)
                  for path in paths for n in args.levels}
    print(f"setup: database {args.db}, campaign {campaign.name} with {campaign.items.count()} items, "
          f"{len(paths) * sum(args.levels)} annotators, {time.monotonic() - t0:.1f} s", flush=True)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores", flush=True)
    token_user = dict(Token.objects.values_list("key", "user_id"))
    connections.close_all()
    rows: list[str] = []
    accepted: dict[tuple[str, str, int], str] = {}
    accepted_count = 0
    failures: list[str] = []
    for path in paths:  # one server per judging path, the same campaign: the paths compared in one run
        server = Server(database_url, var_dir, args.workers, Path(var_dir) / f"gunicorn-{path or 'default'}.log", path)
        cpu = None
        try:
            server.wait_ready()
            print(f"gunicorn: {args.workers} workers on {server.url}, judging path {path or 'default'}; "
                  f"{os.cpu_count()} CPU cores (load average {os.getloadavg()[0]:.1f}); think time {args.think} s",
                  flush=True)
            warm_tokens = all_tokens[(path, max(args.levels))][: 4 * args.workers]
            asyncio.run(warm_up(server.url, campaign.name, warm_tokens, rounds=3))
            print(f"warm-up: 3 rounds of {len(warm_tokens)} concurrent read-only requests (not measured)", flush=True)
            cpu = ServerCpu(database_url, server.proc.pid)
            for n in args.levels:
                before = cpu.snapshot()
                stats, elapsed = asyncio.run(run_level(server.url, campaign.name, all_tokens[(path, n)], args.seconds,
                                                       args.max_requests, args.seed + n, args.think))
                after = cpu.snapshot()
                spent, lost = ServerCpu.spent(before, after)
                web, _lost = ServerCpu.spent(before, after, only=cpu.web_pids())
                rows += report_level(f"{path or 'default'} {n}".ljust(12), stats, elapsed, cpu_seconds=spent)
                accepted.update(stats.accepted)
                accepted_count += stats.accepted_count
                if stats.errors:
                    failures += [f"{n} annotators: {e}" for e in stats.errors[:5]]
                print(f"level {n}: {stats.requests} requests in {elapsed:.1f} s; server CPU {spent:.2f} s "
                      f"(gunicorn {web:.2f} s, PostgreSQL {spent - web:.2f} s)"
                      f"{f' ({lost} process(es) ended during the level: their CPU is missed)' if lost else ''}; "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            if cpu is not None:
                cpu.close()
            server.stop()
    print()
    print(f"CPU: {cpu_model()}; queries: SQL statements per request (X-Kgpool-Queries); CPU ms: gunicorn + "
          f"PostgreSQL CPU per request")
    print("\n".join(table_head("path N".ljust(12))))
    print("\n".join(rows))
    problems = verify(campaign, accepted, token_user)
    from annotation.models import Judgment

    stored = Judgment.objects.filter(item__campaign=campaign).count()
    print(f"\ndatabase: {stored} judgments stored; {len(accepted)} distinct accepted submits "
          f"({accepted_count} answered 201)")
    for line in failures[:10]:
        print("error:", line)
    for line in problems:
        print("VIOLATION:", line)
    if not problems:
        print("verified: no item over two judgments, no person twice on an item, every accepted submit stored once")
    connections.close_all()
    if not args.keep:
        _recreate_database(pg, args.db, drop_only=True)
        shutil.rmtree(var_dir, ignore_errors=True)
    else:
        print(f"kept database {args.db} and {var_dir}")
    return 1 if problems else 0


# --- the published FB15k-237 campaign ------------------------------------------------------------------

PUBLISHED_CAMPAIGN = "published-replay"
REPLAY_SOURCES = ("https://en.wikipedia.org/wiki/Replay_{n}", "https://www.wikidata.org/wiki/Q{n}")
ADJUDICATION_REASON = "decided from the published label (judgments.tsv)"
PUBLISHED_SAMPLE = {"num_test": 20466, "size": 1023, "seed": 42}  # ../shared/data/README.md
ANNOTATORS = ("replay-annotator-1", "replay-annotator-2")
MAX_ERRORS = 100  # a simulated person gives up after this many failed requests (the run then fails)
ADJUDICATOR = "replay-adjudicator"

Triple = tuple[str, str, str]


def _tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def select_pool(judged: dict[Triple, str], sample: list[Triple], limit_items: int | None) -> list[Triple]:
    """The pool triples to replay: every judged triple that is not a sampled one, or with ``limit_items`` the
    judged triples answering the questions (h, r, ?) and (?, r, t) of the sampled triples in file order, one
    sampled triple after the other until at least ``limit_items`` (whole questions, so a few more)."""
    sampled = set(sample)
    pool = sorted(t for t in judged if t not in sampled)
    if limit_items is None:
        return pool
    by_question: dict[tuple, list[Triple]] = defaultdict(list)
    for h, r, t in pool:
        by_question[("tail", h, r)].append((h, r, t))
        by_question[("head", r, t)].append((h, r, t))
    chosen: dict[Triple, None] = {}
    for h, r, t in sample:
        if len(chosen) >= limit_items:
            break
        for triple in by_question[("tail", h, r)] + by_question[("head", r, t)]:
            chosen.setdefault(triple)
    return sorted(chosen)


@dataclass
class Replay:
    """The published campaign set up for the replay (everything the HTTP side and the checks need)."""

    campaign: object  # annotation.models.Campaign
    labels: dict[Triple, str]  # published label of every replayed pool triple
    expected: list[str]  # the judgments.tsv lines the labels export must equal: the sample's + the replayed pool's
    wrong: set[Triple]  # the triples annotator two answers wrongly
    tokens: dict[str, str]  # username -> API token
    token_user: dict[str, int]  # API token -> user id
    pool_total: int  # non-sample lines of judgments.tsv
    problems: list[str] = field(default_factory=list)  # found while setting up
    # what the replay did so far (run_published can be called again: it goes on where it stopped)
    judge_stats: Stats = field(default_factory=Stats)
    judge_elapsed: float = 0.0
    adj_stats: Stats = field(default_factory=Stats)
    adj_elapsed: float = 0.0
    decisions: dict[Triple, str] = field(default_factory=dict)  # adjudications answered 201

    @property
    def name(self) -> str:
        return self.campaign.name

    def answer(self, username: str, triple: Triple) -> str:
        label = self.labels[triple]
        if username == ANNOTATORS[1] and triple in self.wrong:
            return "N" if label == "Y" else "Y"
        return label


def setup_published(shared_data: Path, work_dir: Path, *, limit_items: int | None = None, seed: int = 0,
                    wrong_rate: float = 0.05, kg_name: str = "fb15k-237",
                    campaign_name: str = PUBLISHED_CAMPAIGN) -> Replay:
    """In-process: FB15k-237, the published sample and pool (``import_pool``), a double-annotation campaign
    over it (no trivial filtering, no gold checks, no reused labels: people judge every entry), two
    annotators and an adjudicator with API tokens."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.models import Role
    from annotation.services.campaigns import add_member, create_campaign
    from pooling.engine.sampling import sample_test_indices as published_indices
    from pooling.models import KnowledgeGraph
    from pooling.selectors.pools import sample_test_indices
    from pooling.services.kg_import import import_kg
    from pooling.services.pools import import_pool

    pooled = shared_data / "fb15k-237-pooled"
    kg = KnowledgeGraph.objects.filter(name=kg_name).first() or import_kg(kg_name, shared_data / "fb15k-237")
    sample = [tuple(x) for x in _tsv(pooled / "sample.txt")]
    judged: dict[Triple, str] = {}
    problems: list[str] = []
    for number, fields in enumerate(_tsv(pooled / "judgments.tsv"), start=1):
        if len(fields) != 4 or fields[3] not in ("Y", "N") or tuple(fields[:3]) in judged:
            problems.append(f"judgments.tsv:{number}: not a new `h r t Y|N` line")
            continue
        judged[tuple(fields[:3])] = fields[3]
    # The sampled triples are lines of judgments.tsv (Y by definition) but not pool entries: the labels export
    # writes them from the sample. Every other line must become an item, or the export cannot equal the file.
    not_yes = [t for t in sample if judged.get(t) != "Y"]
    if not_yes:
        problems.append(f"{len(not_yes)} sampled triple(s) not labelled Y in judgments.tsv, e.g. {not_yes[:2]}")
    pool_triples = select_pool(judged, sample, limit_items)
    pool_file = work_dir / "published-pool.tsv"
    pool_file.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in pool_triples), encoding="utf-8")
    # sample.txt (the triples) as tests/test_annotation_published.py does; the indices are checked below.
    pool, counts = import_pool(kg, pool_file, pooled / "sample.txt", name="published-depth10",
                               sample_name="published", depth=10)
    if counts["entries"] != len(pool_triples) or counts["skipped_known"]:
        problems.append(f"import_pool: {counts['entries']} entries, {counts['skipped_known']} known triples skipped; "
                        f"expected {len(pool_triples)} entries")
    indices = sample_test_indices(pool.sample).tolist()
    files = sorted(int(x[0]) for x in _tsv(pooled / "sample_idxs.txt"))
    seeded = published_indices(**PUBLISHED_SAMPLE).tolist()
    if not sorted(indices) == files == seeded:
        problems.append("the imported sample differs from sample_idxs.txt or the seed-42 sample")

    campaign = create_campaign(campaign_name, pool, description="replay of the published FB15k-237 campaign",
                               gold_rate=0.0, reuse=False, seed=seed)
    tokens = {}
    for username, role in ((ANNOTATORS[0], Role.ANNOTATOR), (ANNOTATORS[1], Role.ANNOTATOR),
                           (ADJUDICATOR, Role.ADJUDICATOR)):
        user = get_user_model().objects.create_user(username, password=None)
        add_member(campaign, user, role)
        tokens[username] = Token.objects.create(user=user).key
    wrong = set(random.Random(seed).sample(pool_triples, round(wrong_rate * len(pool_triples))))
    chosen = set(pool_triples) | set(sample)
    expected = [f"{h}\t{r}\t{t}\t{label}" for (h, r, t), label in judged.items() if (h, r, t) in chosen]
    return Replay(campaign=campaign, labels={t: judged[t] for t in pool_triples}, expected=expected, wrong=wrong,
                  tokens=tokens, token_user=dict(Token.objects.filter(key__in=tokens.values()).values_list("key", "user_id")),
                  pool_total=len(judged) - len(set(sample) & set(judged)), problems=problems)


def _triple(item: dict) -> Triple:
    return item["head"]["key"], item["relation"]["key"], item["tail"]["key"]


@dataclass
class Progress:
    done: int = 0  # accepted submits / decisions
    total: int = 0


async def _report_progress(progress: Progress, label: str, every: float, out) -> None:
    start = time.monotonic()
    while True:
        await asyncio.sleep(every)
        elapsed = time.monotonic() - start
        rate = progress.done / elapsed if elapsed else 0.0
        left = (progress.total - progress.done) / rate if rate else float("nan")
        out(f"  {label}: {progress.done:,}/{progress.total:,} ({100 * progress.done / max(progress.total, 1):.1f} %) "
            f"in {elapsed:.0f} s, {rate:.1f}/s, about {left:.0f} s left")


async def _replay_hand_outs(client, replay: Replay, stats: Stats, token: str, endpoint: str, url: str,
                            max_requests: int, idle_tries: int):
    """Ask ``url`` for work and yield (hand-out, triple) until the campaign has nothing left for this person
    (asked ``idle_tries`` times: nothing can also mean that the rest is locked by another request at this
    moment) or ``max_requests`` are spent; the caller answers each hand-out with exactly one request."""
    idle = made = 0
    while made < max_requests and len(stats.errors) < MAX_ERRORS:
        made += 1
        handed = await timed_post(client, stats, token, endpoint, url)
        if handed is None or handed.status_code != 200:
            continue
        body = handed.json()
        if body["item"] is None:
            idle += 1
            if idle >= idle_tries:
                return
            await asyncio.sleep(0.05 * idle)
            continue
        idle = 0
        triple = _triple(body["item"])
        if triple not in replay.labels:
            stats.errors.append(f"{endpoint} handed out {triple}, which is not a replayed line of judgments.tsv")
            return
        made += 1  # the caller's answer
        yield body, triple


async def replay_annotator(client, base: str, replay: Replay, username: str, stats: Stats, progress: Progress,
                           rng: random.Random, max_requests: int, idle_tries: int = 5) -> None:
    """next-item -> submit the answer from judgments.tsv (flipped where ``replay.answer`` says) until the
    campaign has nothing left for this annotator."""
    token = replay.tokens[username]
    api = f"{base}/api/campaigns/{replay.name}"
    async for body, triple in _replay_hand_outs(client, replay, stats, token, "next-item", f"{api}/next-item/",
                                                max_requests, idle_tries):
        answer = replay.answer(username, triple)
        response = await timed_post(
            client, stats, token, "submit", f"{api}/hand-outs/{body['hand_out']}/judgment/",
            json={"answer": answer, "source_url": rng.choice(REPLAY_SOURCES).format(n=rng.randrange(10**6)),
                  "request_id": body["request_id"]})
        if response is not None and response.status_code in (200, 201):
            stats.accepted[(token, "hand_out", body["hand_out"])] = answer
            if response.status_code == 201:
                stats.accepted_count += 1
                progress.done += 1
        elif response is not None and response.status_code < 500 and response.status_code not in (401, 403):
            stats.errors.append(f"submit: {response.status_code} {response.text[:200]}")  # (those are already in)


async def replay_adjudicator(client, base: str, replay: Replay, stats: Stats, progress: Progress,
                             decisions: dict[Triple, str], max_requests: int, idle_tries: int = 3) -> None:
    """next-adjudication -> decide with the published label, until no conflict is left."""
    token = replay.tokens[ADJUDICATOR]
    api = f"{base}/api/campaigns/{replay.name}"
    async for body, triple in _replay_hand_outs(client, replay, stats, token, "next-adj",
                                                f"{api}/next-adjudication/", max_requests, idle_tries):
        label = replay.labels[triple]
        response = await timed_post(client, stats, token, "decide", f"{api}/hand-outs/{body['hand_out']}/adjudication/",
                                    json={"label": label, "reason": ADJUDICATION_REASON})
        if response is not None and response.status_code == 201:
            decisions[triple] = label
            progress.done += 1
        elif response is not None and response.status_code < 500 and response.status_code not in (401, 403):
            stats.errors.append(f"decide: {response.status_code} {response.text[:200]}")


async def run_annotators(base: str, replay: Replay, total: int, *, seed: int, serial: bool = False,
                         progress_every: float = 5.0, out=print) -> tuple[Stats, float]:
    """Both annotators at once (``serial``: one request at a time over one connection, still interleaved; for a
    server that cannot take concurrent requests, such as the test server on in-memory SQLite)."""
    import httpx

    stats, progress = Stats(), Progress(total=total)
    limits = httpx.Limits(max_connections=1 if serial else 4, max_keepalive_connections=1 if serial else 4)
    cap = 4 * total + 100
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0)) as client:
        reporter = asyncio.create_task(_report_progress(progress, "submits", progress_every, out))
        start = time.monotonic()
        try:
            await asyncio.gather(*(replay_annotator(client, base, replay, username, stats, progress,
                                                    random.Random(seed * 1000 + i), cap)
                                   for i, username in enumerate(ANNOTATORS)))
        finally:
            reporter.cancel()
        elapsed = time.monotonic() - start
    return stats, elapsed


async def run_adjudicator(base: str, replay: Replay, total: int, decisions: dict[Triple, str], *,
                          progress_every: float = 5.0, out=print) -> tuple[Stats, float]:
    import httpx

    stats, progress = Stats(), Progress(total=total)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as client:
        reporter = asyncio.create_task(_report_progress(progress, "decisions", progress_every, out))
        start = time.monotonic()
        try:
            await replay_adjudicator(client, base, replay, stats, progress, decisions, 3 * total + 100)
        finally:
            reporter.cancel()
        elapsed = time.monotonic() - start
    return stats, elapsed


@dataclass
class Comparison:
    exported: int
    expected: int
    equal: int  # lines in both
    different: int  # triples in both with another label
    missing: int  # expected triples not exported
    extra: int  # exported triples not expected
    duplicates: int
    examples: list[str]

    @property
    def ok(self) -> bool:
        return self.exported == self.expected == self.equal and not self.duplicates


def compare_export(replay: Replay) -> Comparison:
    """The campaign's labels export (``export_judgments``, format ``labels``) against the published lines."""
    import io

    from annotation.services.exports import export_judgments

    out = io.StringIO()
    export_judgments(replay.campaign, "labels", out)
    lines = out.getvalue().splitlines()
    mine = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in lines}
    theirs = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in replay.expected}
    different = [t for t in mine if t in theirs and mine[t] != theirs[t]]
    missing = [t for t in theirs if t not in mine]
    extra = [t for t in mine if t not in theirs]
    examples = ([f"different: {' '.join(t)} exported {mine[t]}, published {theirs[t]}" for t in different[:3]]
                + [f"missing: {' '.join(t)} ({theirs[t]})" for t in missing[:3]]
                + [f"extra: {' '.join(t)} ({mine[t]})" for t in extra[:3]])
    return Comparison(exported=len(lines), expected=len(replay.expected), equal=len(set(lines) & set(replay.expected)),
                      different=len(different), missing=len(missing), extra=len(extra),
                      duplicates=len(lines) - len(set(lines)), examples=examples)


def conflict_counts(replay: Replay) -> dict[str, int]:
    """Conflicts (waiting for adjudication or adjudicated), split into disagreements (the two answers differ)
    and agreed answers routed to adjudication by a consistency flag (issue 8: e.g. a second "yes" to a
    single-answer question); ``open``: those still waiting."""
    from django.db.models import Count

    from annotation.models import Item

    conflicts = Item.objects.filter(campaign=replay.campaign, status__in=(Item.Status.CONFLICT, Item.Status.ADJUDICATED))
    disagreements = conflicts.annotate(answers=Count("judgments__answer", distinct=True)).filter(answers__gt=1).count()
    total = conflicts.count()
    return {"conflicts": total, "disagreements": disagreements, "flagged": total - disagreements,
            "open": conflicts.filter(status=Item.Status.CONFLICT).count()}


def unjudged(replay: Replay) -> int:
    from annotation.models import Item

    return Item.objects.filter(campaign=replay.campaign, num_judgments__lt=replay.campaign.judgments_per_item).count()


def verify_published(replay: Replay, accepted: dict, decisions: dict[Triple, str], disagreements: int) -> list[str]:
    """``verify`` (integrity of the judgments) plus: every item decided, every conflict adjudicated once by the
    adjudicator with the label sent, and exactly the seeded wrong answers disagreeing."""
    from django.db.models import Count

    from annotation.models import Adjudication, Item

    problems = list(replay.problems) + verify(replay.campaign, accepted, replay.token_user)
    items = Item.objects.filter(campaign=replay.campaign)
    open_ = items.exclude(status__in=(Item.Status.AGREED, Item.Status.ADJUDICATED))
    if open_.exists():
        states = dict(open_.values_list("status").annotate(n=Count("id")))
        problems.append(f"{open_.count()} item(s) not decided after the replay: {states}")
    adjudications = Adjudication.objects.filter(item__campaign=replay.campaign)
    stored = {(h, r, t): label for h, r, t, label in
              adjudications.values_list("item__head__key", "item__relation__key", "item__tail__key", "label")}
    if stored != decisions:
        problems.append(f"{len(stored)} adjudication(s) stored, {len(decisions)} answered 201, "
                        f"{sum(1 for t in decisions if stored.get(t) != decisions[t])} of them not stored as sent")
    if adjudications.exclude(adjudicator_id=replay.token_user[replay.tokens[ADJUDICATOR]]).exists():
        problems.append("adjudication(s) by someone other than the adjudicator")
    if items.filter(status=Item.Status.ADJUDICATED).count() != adjudications.count():
        problems.append("adjudicated items and adjudications differ in number")
    if disagreements != len(replay.wrong):
        problems.append(f"{disagreements} disagreement(s), but annotator two was wrong on {len(replay.wrong)} item(s)")
    return problems


@dataclass
class ReplayResult:
    comparison: Comparison
    problems: list[str]
    counts: dict[str, int]
    lines: list[str]

    @property
    def ok(self) -> bool:
        return self.comparison.ok and not self.problems


def run_published(base: str, replay: Replay, *, seed: int = 0, serial: bool = False, progress_every: float = 5.0,
                  adjudicate: bool = True, out=print) -> ReplayResult:
    """The HTTP part against a running server at ``base``, then the export and the checks (in-process ORM
    calls happen only between the phases, never while requests are in flight). Called again it goes on where
    it stopped (e.g. the adjudication after a call with ``adjudicate=False``)."""
    items = len(replay.labels)
    total = replay.campaign.judgments_per_item * items
    out(f"replay: {items:,} pool items ({replay.pool_total:,} in judgments.tsv besides the {len(replay.expected) - items:,} "
        f"sampled triples); annotator two wrong on {len(replay.wrong):,} ({100 * len(replay.wrong) / max(items, 1):.1f} %, "
        f"seed {seed}); {total:,} submits to make")
    stats = replay.judge_stats
    for attempt in range(3):  # a further pass only if an annotator stopped while the rest was locked
        left = unjudged(replay)
        if not left:
            break
        if stats.requests:
            out(f"  {left} item(s) still unjudged: another pass")
        more, seconds = asyncio.run(run_annotators(base, replay, total - stats.accepted_count, seed=seed + attempt,
                                                   serial=serial, progress_every=progress_every, out=out))
        _merge(stats, more)
        replay.judge_elapsed += seconds
    elapsed = max(replay.judge_elapsed, 1e-9)
    conflicts = conflict_counts(replay)
    out(f"annotators: {stats.accepted_count:,} submits stored (201) in {replay.judge_elapsed:.1f} s: "
        f"{stats.requests / elapsed:.1f} requests/s, {stats.accepted_count / elapsed:.1f} submits/s; conflicts "
        f"{conflicts['conflicts']:,} ({conflicts['disagreements']:,} disagreements, {conflicts['flagged']:,} agreed but "
        f"flagged for consistency)")
    if adjudicate and conflicts["open"]:
        more, seconds = asyncio.run(run_adjudicator(base, replay, conflicts["open"], replay.decisions,
                                                    progress_every=progress_every, out=out))
        _merge(replay.adj_stats, more)
        replay.adj_elapsed += seconds
        out(f"adjudicator: {len(replay.decisions):,} decisions in {replay.adj_elapsed:.1f} s "
            f"({replay.adj_stats.requests / max(replay.adj_elapsed, 1e-9):.1f} requests/s)")
    adj_stats = replay.adj_stats
    table = [*table_head("phase"),
             *report_level("judge", stats, elapsed),
             *(report_level("adj  ", adj_stats, max(replay.adj_elapsed, 1e-9), ("next-adj", "decide"))
               if adj_stats.requests else [])]
    for line in table:
        out(line)
    comparison = compare_export(replay)
    problems = verify_published(replay, stats.accepted, replay.decisions, conflicts["disagreements"])
    problems += [f"request error: {e}" for e in (stats.errors + adj_stats.errors)[:10]]
    out(f"export (labels): {comparison.exported:,} lines; published: {comparison.expected:,} (the sampled triples + the "
        f"replayed pool); equal {comparison.equal:,}, different label {comparison.different:,}, missing "
        f"{comparison.missing:,}, extra {comparison.extra:,}, duplicate {comparison.duplicates:,}")
    for line in comparison.examples:
        out(f"  {line}")
    for line in problems:
        out(f"VIOLATION: {line}")
    if not problems:
        out("verified: no item over two judgments, no person twice on an item, every accepted submit stored once, "
            "every item decided, every conflict adjudicated once as sent")
    counts = {"items": items, "submits": stats.accepted_count, "requests": stats.requests + adj_stats.requests,
              "wrong": len(replay.wrong), **conflicts, "adjudications": len(replay.decisions),
              "equal": comparison.equal, "different": comparison.exported + comparison.expected - 2 * comparison.equal}
    result = ReplayResult(comparison, problems, counts, table)
    verdict = [*(["the export differs from the published labels"] if not comparison.ok else []),
               *([f"{len(problems)} violation(s)"] if problems else [])]
    out("RESULT: " + ("FAILED: " + "; ".join(verdict) if verdict else
                      "the export equals the published labels, 0 violations"))
    return result


def _merge(into: Stats, more: Stats) -> None:
    for endpoint, values in more.latencies.items():
        into.latencies[endpoint] += values
    for endpoint, codes in more.statuses.items():
        for code, n in codes.items():
            into.statuses[endpoint][code] += n
    into.errors += more.errors
    into.accepted.update(more.accepted)
    into.accepted_count += more.accepted_count
    into.requests += more.requests


def main_published(args) -> int:
    t0 = time.monotonic()
    database_url = _recreate_database(args.pg, args.db)
    var_dir = tempfile.mkdtemp(prefix="kgpool-replay-")
    _setup_django(database_url, var_dir)
    from django.core.management import call_command
    from django.db import connections

    server = None
    try:
        call_command("migrate", verbosity=0, interactive=False)
        replay = setup_published(args.shared_data, Path(var_dir), limit_items=args.limit_items, seed=args.seed,
                                 wrong_rate=args.wrong_rate)
        print(f"setup: database {args.db}, FB15k-237 imported, sample {len(replay.expected) - len(replay.labels):,}, "
              f"campaign {replay.name} with {replay.campaign.items.count():,} items, {time.monotonic() - t0:.1f} s",
              flush=True)
        connections.close_all()
        server = Server(database_url, var_dir, args.workers, Path(var_dir) / "gunicorn.log")
        server.wait_ready()
        print(f"gunicorn: {args.workers} workers on {server.url}; {os.cpu_count()} CPU cores, {cpu_model()} (load "
              f"average {os.getloadavg()[0]:.1f})", flush=True)
        asyncio.run(warm_up(server.url, replay.name, list(replay.tokens.values()) * (2 * args.workers), rounds=2))
        t1 = time.monotonic()
        result = run_published(server.url, replay, seed=args.seed, progress_every=args.progress,
                               out=lambda line: print(line, flush=True))
        print(f"wall time: {time.monotonic() - t1:.1f} s for the replay (HTTP, export, checks), "
              f"{time.monotonic() - t0:.1f} s with the set-up; load average {os.getloadavg()[0]:.1f}")
    finally:
        if server is not None:
            server.stop()
        connections.close_all()
        if not args.keep:
            _recreate_database(args.pg, args.db, drop_only=True)
            shutil.rmtree(var_dir, ignore_errors=True)
        else:
            print(f"kept database {args.db} and {var_dir}")
    return 0 if result.ok else 1


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("KGPOOL_LOAD_PG", "postgres://postgres@127.0.0.1:5432"),
                        help="PostgreSQL server URL without database name")
    parser.add_argument("--db", default="kgpool_load", help="database to create (dropped first)")
    parser.add_argument("--levels", type=int, nargs="+", default=[10, 50, 200], help="simulated annotators per level")
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each level")
    parser.add_argument("--max-requests", type=int, default=5000, help="most requests per simulated annotator")
    parser.add_argument("--items", type=int, default=6000, help="items in the campaign")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="gunicorn sync workers (default one per core: the work is CPU-bound and PostgreSQL shares the cores)")
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds an annotator spends on an item between next-item and submit "
                             "(0: closed loop at full speed, a saturation test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paths", nargs="+", default=None,
                        help="judging code paths to compare in one run (KGPOOL_JUDGING_PATH of the server, e.g. "
                             "legacy fast; default: the server's default)")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--published", action="store_true", help="replay the published FB15k-237 campaign instead")
    parser.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--wrong-rate", type=float, default=0.05, help="--published: error rate of annotator two")
    parser.add_argument("--limit-items", type=int, default=None,
                        help="--published: replay only the pool entries of the first sampled triples' questions, "
                             "about this many (default: the whole pool)")
    parser.add_argument("--progress", type=float, default=10.0, help="--published: seconds between progress lines")
    return parser.parse_args(argv)


def _stop_on_sigterm(_signum, _frame) -> None:
    raise KeyboardInterrupt  # like Ctrl-C: the finally blocks stop gunicorn (and the replay drops its database)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    arguments = parse()
    sys.exit(main_published(arguments) if arguments.published else main_load(arguments))
