"""Load benchmark of the judging API (issue 6): simulated annotators against gunicorn on PostgreSQL.

    .venv/bin/pip install -r bench/requirements-load.txt
    .venv/bin/python bench/load_annotation.py                      # 10, 50, 200 annotators, 20 s each
    .venv/bin/python bench/load_annotation.py --levels 50 --seconds 10 --workers 5

What it does: creates a fresh PostgreSQL database (``--db``, dropped first; PostgreSQL from ``--pg``), migrates,
imports the bundled UMLS dataset, samples test triples and pools ``--items`` candidate triples directly (no
model training: the benchmark is about the web layer), creates a campaign and, per level, N annotators with
API tokens. It starts gunicorn on 127.0.0.1 (``--workers``, default 2*cores+1) with DATABASE_URL set and runs
N simulated annotators per level, each looping next-item -> submit (Y/N + an allow-listed source URL) for
``--seconds`` (and at most ``--max-requests`` requests each). It prints requests/s and p50/p95/p99 latency per
endpoint and the errors, then checks the database: no item with more than two judgments, no person with two
judgments of one item, every accepted submit (2xx) stored exactly once. Loopback only; the server is stopped
and (unless ``--keep``) the database dropped at the end. Exit status 1 on any violation.

``--published`` (NOT YET WRITTEN; exits 2): the replay of the published FB15k-237 campaign (../shared/data/fb15k-237-pooled): import the
sample and the published pool, two simulated annotators answering from judgments.tsv (one wrong on a seeded
5 %), an adjudicator answering from the file; the export must equal the published labels.
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
    def __init__(self, database_url: str, var_dir: str, workers: int, log: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "DATABASE_URL": database_url, "KGPOOL_VAR_DIR": var_dir, "DEBUG": "false",
               "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "kgpool.settings"}
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


async def annotator(client, base: str, campaign: str, token: str, stats: Stats, deadline: float, max_requests: int,
                    rng: random.Random, think: float = 0.0) -> None:
    import httpx

    headers = {"Authorization": f"Token {token}"}

    async def call(endpoint: str, url: str, **kw):
        start = time.perf_counter()
        try:
            response = await client.post(url, headers=headers, **kw)
        except httpx.HTTPError as exc:
            stats.errors.append(f"{endpoint}: {type(exc).__name__}: {exc}")
            stats.statuses[endpoint][-1] += 1
            return None
        finally:
            stats.requests += 1
        stats.latencies[endpoint].append(time.perf_counter() - start)
        stats.statuses[endpoint][response.status_code] += 1
        if response.status_code >= 500 or response.status_code in (401, 403):
            stats.errors.append(f"{endpoint}: {response.status_code} {response.text[:200]}")
        return response

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


def report_level(n: int, stats: Stats, elapsed: float) -> list[str]:
    lines = []
    for endpoint in ("next-item", "submit"):
        lat = [x * 1000 for x in stats.latencies.get(endpoint, [])]
        codes = " ".join(f"{c}:{k}" for c, k in sorted(stats.statuses.get(endpoint, {}).items()))
        lines.append(f"| {n:>4} | {endpoint:<9} | {len(lat):>6} | {len(lat) / elapsed:>7.1f} | "
                     f"{percentile(lat, 50):>7.1f} | {percentile(lat, 95):>7.1f} | {percentile(lat, 99):>7.1f} | "
                     f"{(statistics.fmean(lat) if lat else float('nan')):>7.1f} | {codes} |")
    lines.append(f"| {n:>4} | all       | {stats.requests:>6} | {stats.requests / elapsed:>7.1f} | "
                 f"{'':>7} | {'':>7} | {'':>7} | {'':>7} | errors {len(stats.errors)} |")
    return lines


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
    all_tokens = {n: make_annotators(campaign, f"load{n}-", n) for n in args.levels}
    print(f"setup: database {args.db}, campaign {campaign.name} with {campaign.items.count()} items, "
          f"{sum(args.levels)} annotators, {time.monotonic() - t0:.1f} s", flush=True)
    token_user = dict(Token.objects.values_list("key", "user_id"))
    connections.close_all()
    log = Path(var_dir) / "gunicorn.log"
    server = Server(database_url, var_dir, args.workers, log)
    rows: list[str] = []
    accepted: dict[tuple[str, str, int], str] = {}
    accepted_count = 0
    failures: list[str] = []
    try:
        server.wait_ready()
        print(f"gunicorn: {args.workers} workers on {server.url}; {os.cpu_count()} CPU cores (shared machine, load "
              f"average {os.getloadavg()[0]:.1f}); think time {args.think} s", flush=True)
        warm_tokens = all_tokens[max(args.levels)][: 4 * args.workers]
        asyncio.run(warm_up(server.url, campaign.name, warm_tokens, rounds=3))
        print(f"warm-up: 3 rounds of {len(warm_tokens)} concurrent read-only requests (not measured)", flush=True)
        for n in args.levels:
            stats, elapsed = asyncio.run(run_level(server.url, campaign.name, all_tokens[n], args.seconds,
                                                   args.max_requests, args.seed + n, args.think))
            rows += report_level(n, stats, elapsed)
            accepted.update(stats.accepted)
            accepted_count += stats.accepted_count
            if stats.errors:
                failures += [f"{n} annotators: {e}" for e in stats.errors[:5]]
            print(f"level {n}: {stats.requests} requests in {elapsed:.1f} s", flush=True)
    finally:
        server.stop()
    print()
    print("| N    | endpoint  | count  | req/s   | p50 ms  | p95 ms  | p99 ms  | mean ms | status codes |")
    print("|------|-----------|--------|---------|---------|---------|---------|---------|--------------|")
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

def main_published(args) -> int:
    print("--published (the FB15k-237 replay) is not written yet: see issue 6", file=sys.stderr)
    return 2


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("KGPOOL_LOAD_PG", "postgres://postgres@127.0.0.1:5432"),
                        help="PostgreSQL server URL without database name")
    parser.add_argument("--db", default="kgpool_load", help="database to create (dropped first)")
    parser.add_argument("--levels", type=int, nargs="+", default=[10, 50, 200], help="simulated annotators per level")
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each level")
    parser.add_argument("--max-requests", type=int, default=5000, help="most requests per simulated annotator")
    parser.add_argument("--items", type=int, default=6000, help="items in the campaign")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn workers")
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds an annotator spends on an item between next-item and submit "
                             "(0: closed loop at full speed, a saturation test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--published", action="store_true", help="replay the published FB15k-237 campaign instead")
    parser.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--wrong-rate", type=float, default=0.05, help="--published: error rate of annotator two")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    sys.exit(main_published(arguments) if arguments.published else main_load(arguments))
