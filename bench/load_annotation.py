"""Load benchmark of the judging API (issue 6): simulated annotators against the web server on PostgreSQL.

    .venv/bin/pip install -r bench/requirements-load.txt
    .venv/bin/python bench/load_annotation.py                      # 10, 50, 200 annotators, 20 s each
    .venv/bin/python bench/load_annotation.py --levels 50 --seconds 30 --think 2   # the README figures
    .venv/bin/python bench/load_annotation.py --levels 50 --seconds 30 --think 2 --paths legacy fast --rounds 3
                                                                     # issue 21's ratio, paths taking turns

What it does: creates a fresh PostgreSQL database (``--db``, dropped first; PostgreSQL from ``--pg``), migrates,
imports the bundled UMLS dataset (``--kg codex-s``: CoDEx-S from ``--shared-data`` with CoDEx's entity types and
their 530 KB of type labels), samples test triples and pools ``--items`` candidate triples directly (no
model training: the benchmark is about the web layer), creates a campaign and, per level, N annotators with
API tokens. It starts the web server as ``kgpool serve`` does (``--server``: granian, or gunicorn's sync
workers) on 127.0.0.1 (``--workers``, default one per core) with DATABASE_URL set and runs
N simulated annotators per level, each looping next-item -> submit (Y/N + an allow-listed source URL) for
``--seconds`` (and at most ``--max-requests`` requests each). It prints requests/s and p50/p95/p99 latency per
endpoint and the errors, the server's CPU per request and per judged item (``--next-in-submit``: each submit asks
for the next hand-out, one request per item as the judging page does), then checks the database: no item with more
than two judgments, no person with two judgments of one item, every accepted submit (2xx) stored exactly once. Loopback only; the server is stopped
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
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from kgpool.serving import DEFAULT_SERVER, SERVERS  # noqa: E402 - the command line only, no Django
from bench.load_server import (  # noqa: E402 - shared with the replay (load_published)
    Server,
    ServerCpu,
    StandInAutovacuum,
    Stats,
    cpu_model,
    recreate_database,
    report_level,
    setup_django,
    table_head,
    timed_post,
    verify,
    warm_up,
)

SOURCES = ("https://en.wikipedia.org/wiki/Load_test_{n}", "https://www.wikidata.org/wiki/Q{n}")


def import_bench_kg(name: str, shared_data: Path):
    """The benchmark's KG: the bundled UMLS, or CoDEx-S from the shared data with CoDEx's entity types and their
    labels (530 KB of type labels: what a KG with types brings to every request)."""
    from pooling.engine.kgfiles import MetadataFiles
    from pooling.models import KnowledgeGraph
    from pooling.services.kg_import import import_kg

    found = KnowledgeGraph.objects.filter(name=name).first()
    if found is not None:
        return found
    if name == "umls":
        return import_kg("umls", ROOT / "datasets" / "umls")
    codex = shared_data / "codex"
    files = MetadataFiles(entity_types=codex / "entity2types.json", type_labels=codex / "en" / "types.json",
                          relation_labels=codex / "en" / "relations.json")
    return import_kg(name, shared_data / name, files=files)


def build_campaign(items: int, seed: int, kg_name: str = "umls", shared_data: Path | None = None):
    """The KG imported, a sample of its test triples, a pool of ``items`` candidate triples that are in no split."""
    import numpy as np
    from django.core.management import call_command

    from annotation.services.campaigns import create_campaign
    from pooling.models import Entity, Pool, PoolEntry, Relation
    from pooling.selectors.kg import kg_triples
    from pooling.services.samples import create_sample

    call_command("migrate", verbosity=0, interactive=False)
    kg = import_bench_kg(kg_name, shared_data or ROOT.parent / "shared" / "data")
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

async def annotator(client, base: str, campaign: str, token: str, stats: Stats, deadline: float, max_requests: int,
                    rng: random.Random, think: float = 0.0, next_in_submit: bool = False) -> None:
    async def call(endpoint: str, url: str, **kw):
        return await timed_post(client, stats, token, endpoint, url, **kw)

    if think:  # ramp-up: annotators arrive over the first think period instead of all in the same millisecond
        await asyncio.sleep(rng.uniform(0, think))
    made = 0
    body = None  # next_in_submit: the hand-out the last submit brought
    while time.monotonic() < deadline and made < max_requests:
        if body is None:
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
        payload = {"answer": answer, "source_url": source, "request_id": body["request_id"]}
        if next_in_submit:
            payload["next"] = True
        response = await call("submit", f"{base}/api/campaigns/{campaign}/{path}/judgment/", json=payload)
        body = None
        if response is not None and response.status_code in (200, 201):
            key = (token, *key)
            if response.status_code == 201:
                stats.accepted_count += 1
            stats.accepted[key] = answer
            if next_in_submit:
                body = response.json().get("next")  # None (a refused next): ask next-item again


async def run_level(base: str, campaign: str, tokens: list[str], seconds: float, max_requests: int, seed: int,
                    think: float = 0.0, next_in_submit: bool = False) -> tuple[Stats, float]:
    import httpx

    stats = Stats()
    limits = httpx.Limits(max_connections=len(tokens) + 10, max_keepalive_connections=len(tokens) + 10)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0)) as client:
        start = time.monotonic()
        deadline = start + seconds
        await asyncio.gather(*(annotator(client, base, campaign, token, stats, deadline, max_requests,
                                         random.Random(seed * 1000 + i), think, next_in_submit)
                               for i, token in enumerate(tokens)))
        elapsed = time.monotonic() - start
    return stats, elapsed


def judging_path_and_mode(path: str | None, next_in_submit: bool) -> tuple[str | None, bool]:
    """``--paths`` entry -> (the server's KGPOOL_JUDGING_PATH, whether each submit asks for the next hand-out):
    ``fast+next`` is the fast path with one request per item, so that it runs in the same run as ``legacy``'s
    two requests per item (the API as issue 21 found it)."""
    if path is not None and path.endswith("+next"):
        return path[: -len("+next")], True
    return path, next_in_submit


def ratio_summary(cpu_per_request: dict[tuple[str, int, int], float], baseline: str = "legacy") -> list[str]:
    """Lines comparing each path's server CPU per request with ``baseline``'s of the same round and level (the
    figure issue 21 asks for), with the median over the rounds; nothing without a baseline or with one round."""
    rounds = sorted({r for _path, _n, r in cpu_per_request})
    lines = []
    for path, n in sorted({(path, n) for path, n, _r in cpu_per_request if path != baseline}):
        pairs = [(cpu_per_request[(baseline, n, r)], cpu_per_request[(path, n, r)]) for r in rounds
                 if (baseline, n, r) in cpu_per_request and (path, n, r) in cpu_per_request]
        if len(pairs) < 2:
            continue
        ratios = [base / mine for base, mine in pairs]
        lines.append(f"{baseline} / {path} at {n}: CPU per request {statistics.median(ratios):.2f}x the median of "
                     f"{len(ratios)} rounds ({', '.join(f'{x:.2f}x' for x in ratios)}; {path} "
                     f"{', '.join(f'{mine:.2f}' for _base, mine in pairs)} ms, {baseline} "
                     f"{', '.join(f'{base:.2f}' for base, _mine in pairs)} ms)")
    return lines


def main_load(args) -> int:
    pg = args.pg
    database_url = recreate_database(pg, args.db)
    var_dir = tempfile.mkdtemp(prefix="kgpool-load-")
    setup_django(database_url, var_dir)
    from django.db import connections
    from rest_framework.authtoken.models import Token

    t0 = time.monotonic()
    campaign = build_campaign(args.items, args.seed, args.kg, args.shared_data)
    paths = args.paths or [None]  # None: the server's default judging path; "fast+next": with --next-in-submit
    rounds = range(1, args.rounds + 1)
    all_tokens = {(path, n, r): make_annotators(campaign, f"load-{path or 'default'}-{n}-r{r}-", n)
                  for r in rounds for path in paths for n in args.levels}
    print(f"setup: database {args.db}, campaign {campaign.name} with {campaign.items.count()} items, "
          f"{sum(len(t) for t in all_tokens.values())} annotators, "
          f"{time.monotonic() - t0:.1f} s", flush=True)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores", flush=True)
    token_user = dict(Token.objects.values_list("key", "user_id"))
    connections.close_all()
    rows: list[str] = []
    accepted: dict[tuple[str, str, int], str] = {}
    accepted_count = 0
    failures: list[str] = []
    cpu_per_request: dict[tuple[str, int, int], float] = {}
    # one server per judging path, the same campaign: the paths compared in one run; with --rounds the paths take
    # turns, round after round, so that a drift of the machine falls on every path alike
    analyzer = StandInAutovacuum(database_url, args.analyze_every)
    try:
        for r, path in ((r, path) for r in rounds for path in paths):
            label = f"{path or 'default'}{f' #{r}' if args.rounds > 1 else ''}"
            judging_path, next_in_submit = judging_path_and_mode(path, args.next_in_submit)
            server = Server(database_url, var_dir, args.workers,
                            Path(var_dir) / f"{args.server}-{path or 'default'}.log", judging_path, args.server)
            cpu = None
            try:
                server.wait_ready()
                print(f"{args.server}: {args.workers} workers on {server.url}, judging path {judging_path or 'default'}"
                      f"{' (each submit asks for the next hand-out)' if next_in_submit else ''}; "
                      f"{os.cpu_count()} CPU cores (load average {os.getloadavg()[0]:.1f}); think time {args.think} s",
                      flush=True)
                warm_tokens = all_tokens[(path, max(args.levels), r)][: 4 * args.workers]
                asyncio.run(warm_up(server.url, campaign.name, warm_tokens, rounds=3))
                print(f"warm-up: 3 rounds of {len(warm_tokens)} concurrent read-only requests (not measured)",
                      flush=True)
                cpu = ServerCpu(database_url, server.proc.pid)
                for n in args.levels:
                    before = cpu.snapshot()
                    stats, elapsed = asyncio.run(run_level(server.url, campaign.name, all_tokens[(path, n, r)],
                                                           args.seconds,
                                                           args.max_requests, args.seed + n, args.think,
                                                           next_in_submit))
                    after = cpu.snapshot()
                    spent, lost = ServerCpu.spent(before, after)
                    web, _lost = ServerCpu.spent(before, after, only=cpu.web_pids())
                    rows += report_level(f"{label} {n}".ljust(12), stats, elapsed, cpu_seconds=spent)
                    cpu_per_request[(path or "default", n, r)] = 1000 * spent / max(stats.requests, 1)
                    accepted.update(stats.accepted)
                    accepted_count += stats.accepted_count
                    if stats.errors:
                        failures += [f"{n} annotators: {e}" for e in stats.errors[:5]]
                    print(f"level {n}: {stats.requests} requests in {elapsed:.1f} s; server CPU {spent:.2f} s "
                          f"({args.server} {web:.2f} s, PostgreSQL {spent - web:.2f} s)"
                          f"{f' ({lost} process(es) ended during the level: their CPU is missed)' if lost else ''}; "
                          f"{1000 * spent / max(stats.accepted_count, 1):.2f} ms per judged item "
                          f"({stats.accepted_count} accepted submits); load average {os.getloadavg()[0]:.1f}",
                          flush=True)
            finally:
                if cpu is not None:
                    cpu.close()
                server.stop()
    finally:
        analyzer.stop()
    print()
    print(f"CPU: {cpu_model()}; queries: SQL statements per request (X-Kgpool-Queries); CPU ms: {args.server} + "
          f"PostgreSQL CPU per request")
    print("\n".join(table_head("path N".ljust(12))))
    print("\n".join(rows))
    for line in ratio_summary(cpu_per_request):
        print(line)
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
        recreate_database(pg, args.db, drop_only=True)
        shutil.rmtree(var_dir, ignore_errors=True)
    else:
        print(f"kept database {args.db} and {var_dir}")
    return 1 if problems else 0


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("KGPOOL_LOAD_PG", "postgres://postgres@127.0.0.1:5432"),
                        help="PostgreSQL server URL without database name")
    parser.add_argument("--db", default="kgpool_load", help="database to create (dropped first)")
    parser.add_argument("--levels", type=int, nargs="+", default=[10, 50, 200], help="simulated annotators per level")
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each level")
    parser.add_argument("--max-requests", type=int, default=5000, help="most requests per simulated annotator")
    parser.add_argument("--items", type=int, default=6000, help="items in the campaign")
    parser.add_argument("--kg", choices=["umls", "codex-s"], default="umls",
                        help="the campaign's KG: the bundled UMLS, or CoDEx-S with CoDEx's types and their labels "
                             "(from --shared-data)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="web server workers, one request at a time each (default one per core: the work is "
                             "CPU-bound and PostgreSQL shares the cores)")
    parser.add_argument("--server", choices=SERVERS, default=DEFAULT_SERVER,
                        help="the web server, as `kgpool serve --server` starts it (default %(default)s; gunicorn: "
                             "its sync workers, the earlier default)")
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds an annotator spends on an item between next-item and submit "
                             "(0: closed loop at full speed, a saturation test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paths", nargs="+", default=None,
                        help="judging code paths to compare in one run (KGPOOL_JUDGING_PATH of the server: legacy, "
                             "drf or fast, e.g. legacy drf fast; default: the server's default); PATH+next: that "
                             "path with each submit asking for the next hand-out (--next-in-submit for that path "
                             "only), e.g. legacy fast+next")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the --paths this many times in turn (legacy fast legacy fast ...) and print each "
                             "path's CPU per request against legacy's of the same round, with the median")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--published", action="store_true", help="replay the published FB15k-237 campaign instead")
    parser.add_argument("--shared-data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--wrong-rate", type=float, default=0.05, help="--published: error rate of annotator two")
    parser.add_argument("--limit-items", type=int, default=None,
                        help="--published: replay only the pool entries of the first sampled triples' questions, "
                             "about this many (default: the whole pool)")
    parser.add_argument("--progress", type=float, default=10.0, help="--published: seconds between progress lines")
    parser.add_argument("--next-in-submit", action="store_true",
                        help="levels: each submit asks for the next hand-out (\"next\": true, one request per item, "
                             "as the judging page and Client.judge(next=True)); default: next-item -> submit")
    parser.add_argument("--separate-next", action="store_true",
                        help="--published: a next-item request per item (default: each submit asks for the next "
                             "hand-out in its answer, one round trip per item)")
    parser.add_argument("--analyze-every", type=float, default=30.0,
                        help="where the server's autovacuum is off: seconds between ANALYZEs of the judging tables, "
                             "after one of the whole database (what autovacuum would do; 0: never)")
    return parser.parse_args(argv)


def _stop_on_sigterm(_signum, _frame) -> None:
    raise KeyboardInterrupt  # like Ctrl-C: the finally blocks stop the server (and the replay drops its database)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    arguments = parse()
    if arguments.published:
        from bench.load_published import main_published

        sys.exit(main_published(arguments))
    sys.exit(main_load(arguments))
