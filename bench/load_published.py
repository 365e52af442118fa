"""The replay of the published FB15k-237 campaign through the judging API (``bench/load_annotation.py --published``;
its docstring says what the replay does and checks). Set-up, the simulated annotators and adjudicator, the export's
comparison with judgments.tsv; the server, the statistics and the database helpers are the load benchmark's."""
from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.load_server import (  # noqa: E402 - the same server, statistics and database set-up
    StandInAutovacuum,
    Server,
    Stats,
    recreate_database,
    setup_django,
    cpu_model,
    report_level,
    table_head,
    timed_post,
    verify,
    warm_up,
)


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


@dataclass
class Carried:
    """A hand-out that came with the answer to the previous one (a submit with ``"next": true``)."""

    body: dict | None = None


async def _replay_hand_outs(client, replay: Replay, stats: Stats, token: str, endpoint: str, url: str,
                            max_requests: int, idle_tries: int, carried: Carried | None = None):
    """Ask ``url`` for work and yield (hand-out, triple) until the campaign has nothing left for this person
    (asked ``idle_tries`` times: nothing can also mean that the rest is locked by another request at this
    moment) or ``max_requests`` are spent; the caller answers each hand-out with exactly one request. A hand-out
    the caller leaves in ``carried`` (its answer's ``next``) is taken without asking."""
    idle = made = 0
    while made < max_requests and len(stats.errors) < MAX_ERRORS:
        if carried is not None and carried.body is not None:
            body, carried.body = carried.body, None
        else:
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
                           rng: random.Random, max_requests: int, idle_tries: int = 5,
                           separate_next: bool = False) -> None:
    """next-item -> submit the answer from judgments.tsv (flipped where ``replay.answer`` says) until the
    campaign has nothing left for this annotator. Each submit asks for the next hand-out in its answer (one round
    trip per item, as the judging page saves), unless ``separate_next`` (a next-item request per item)."""
    token = replay.tokens[username]
    api = f"{base}/api/campaigns/{replay.name}"
    carried = None if separate_next else Carried()
    async for body, triple in _replay_hand_outs(client, replay, stats, token, "next-item", f"{api}/next-item/",
                                                max_requests, idle_tries, carried):
        answer = replay.answer(username, triple)
        response = await timed_post(
            client, stats, token, "submit", f"{api}/hand-outs/{body['hand_out']}/judgment/",
            json={"answer": answer, "source_url": rng.choice(REPLAY_SOURCES).format(n=rng.randrange(10**6)),
                  "request_id": body["request_id"], "next": carried is not None})
        if response is not None and response.status_code in (200, 201):
            stats.accepted[(token, "hand_out", body["hand_out"])] = answer
            if carried is not None:
                carried.body = response.json()["next"]
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
                         separate_next: bool = False, progress_every: float = 5.0, out=print) -> tuple[Stats, float]:
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
                                                    random.Random(seed * 1000 + i), cap, separate_next=separate_next)
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
                  adjudicate: bool = True, separate_next: bool = False, out=print) -> ReplayResult:
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
                                                   serial=serial, separate_next=separate_next,
                                                   progress_every=progress_every, out=out))
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
    for endpoint, counts in more.queries.items():  # the statements per request column (it printed nan without)
        into.queries[endpoint] += counts
    into.errors += more.errors
    into.accepted.update(more.accepted)
    into.accepted_count += more.accepted_count
    into.requests += more.requests


def main_published(args) -> int:
    t0 = time.monotonic()
    database_url = recreate_database(args.pg, args.db)
    var_dir = tempfile.mkdtemp(prefix="kgpool-replay-")
    setup_django(database_url, var_dir)
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
        server = Server(database_url, var_dir, args.workers, Path(var_dir) / f"{args.server}.log", server=args.server)
        server.wait_ready()
        print(f"{args.server}: {args.workers} workers on {server.url}; {os.cpu_count()} CPU cores, {cpu_model()} (load "
              f"average {os.getloadavg()[0]:.1f})", flush=True)
        asyncio.run(warm_up(server.url, replay.name, list(replay.tokens.values()) * (2 * args.workers), rounds=2))
        analyzer = StandInAutovacuum(database_url, args.analyze_every)
        t1 = time.monotonic()
        try:
            result = run_published(server.url, replay, seed=args.seed, progress_every=args.progress,
                                   separate_next=args.separate_next, out=lambda line: print(line, flush=True))
        finally:
            analyzer.stop()
        print(f"wall time: {time.monotonic() - t1:.1f} s for the replay (HTTP, export, checks), "
              f"{time.monotonic() - t0:.1f} s with the set-up; load average {os.getloadavg()[0]:.1f}")
    finally:
        if server is not None:
            server.stop()
        connections.close_all()
        if not args.keep:
            recreate_database(args.pg, args.db, drop_only=True)
            shutil.rmtree(var_dir, ignore_errors=True)
        else:
            print(f"kept database {args.db} and {var_dir}")
    return 0 if result.ok else 1
