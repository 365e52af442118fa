"""Stages ``campaign`` and ``pages`` of bench/scale.py (issue 18): the campaign's steps and every page at scale.

``campaign``: a seeded sample of 2,000 test triples, a pool of depth 10 from two synthetic runs (random
candidates per question, written through the pool merge's own upsert ``write_entries``: no model is trained or
scored, the pool stage measures that), the campaign (one item per entry), the trivial filters applied, a
share of the items labelled through ``import_judgments``, every export format, and an evaluation run on the
campaign's labels with a random-weight DistMult (dim 8: no training at this size). Each step prints its time.

``pages``: every admin page (index, then each registered model's changelist, add and change page and a search)
and every product page (home, campaign pages, management pages, evaluation pages) fetched with Django's test
client as a logged-in superuser, each timed (best of ``SCALE_PAGE_REPEATS``, default 2, after a warm-up); prints them all, slowest last, and
the slowest with its URL.

Without the import stage in the same invocation they attach to an existing database: ``--database-url``, or
``KGPOOL_VAR_DIR`` of an earlier embedded run (``kgpool-scale-*`` under ``--workdir``).
"""
from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

CAMPAIGN = "scale-campaign"
SAMPLE_SIZE = 2000
DEPTH = 10
SYSTEMS = ("synth-a", "synth-b")
LABELLED_SHARE = 0.2  # of the pool's items, labelled Y/N by import_judgments
SLOW_MS = 300.0


def attach_database(context) -> None:
    """Django against the database an earlier stage (or run) filled."""
    if "kg" in context.facts:
        return
    if context.args.database_url:
        os.environ["DATABASE_URL"] = context.args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from pooling.models import KnowledgeGraph

    context.facts["kg"] = KnowledgeGraph.objects.get(name=f"scale-{context.spec.triples}")


def _step(name: str, run: Callable[[], object], items: int | None = None, unit: str = "") -> object:
    started = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - started
    rate = f"  {items / max(seconds, 1e-9):12,.0f} {unit}/s" if items else ""
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"  {name:28s} {seconds:7.2f} s{rate}  (load {load})", flush=True)
    return result


# ------------------------------------------------------------------------------------ campaign
def synthetic_hits(sample, systems, depth: int, seed: int) -> list[tuple[tuple[int, int, int], int, int, int]]:
    """Hit rows (triple pks, system pk, question pk, rank) of runs naming ``depth`` random unknown candidates
    per question; the runs share half their candidates, so entries have one or two systems."""
    from pooling.selectors.pools import question_filter, sample_questions

    kg = sample.kg
    sq = sample_questions(sample)
    filters = question_filter(kg, sq.questions)
    rng = np.random.default_rng(seed)
    shared = rng.integers(0, kg.num_entities, size=(len(sq), depth))
    rows = []
    for number, system in enumerate(systems):
        own = rng.integers(0, kg.num_entities, size=(len(sq), depth))
        candidates = np.where(np.arange(depth) % 2 == number % 2, shared, own)
        for row in range(len(sq)):
            known = set(filters.values[filters.offsets[row]:filters.offsets[row + 1]].tolist())
            for rank, entity in enumerate(dict.fromkeys(candidates[row].tolist()), start=1):
                if entity not in known:
                    rows.append((row, int(entity), system.pk, rank))
    from pooling.engine.questions import HEAD

    entities = sorted({entity for _row, entity, _system, _rank in rows} | set(sq.questions.anchor.tolist()))
    from pooling.models import Relation
    from pooling.selectors.pools import entity_pks_of_indices

    entity_pk = entity_pks_of_indices(kg, entities)  # batched IN lists (PostgreSQL takes 65,535 parameters)
    relation_pk = dict(Relation.objects.filter(kg=kg).values_list("index", "pk"))
    hits = []
    for row, entity, system_pk, rank in rows:
        anchor, relation = int(sq.questions.anchor[row]), int(sq.questions.relation[row])
        head, tail = (entity, anchor) if sq.questions.side[row] == HEAD else (anchor, entity)
        hits.append(((entity_pk[head], relation_pk[relation], entity_pk[tail]), system_pk, int(sq.pks[row]), rank))
    return hits


def synthetic_pool(sample, depth: int = DEPTH):
    """A done pool of two imported systems' synthetic runs (see :func:`synthetic_hits`)."""
    from django.db import transaction
    from django.utils import timezone

    from pooling.models import Pool, System
    from pooling.services.pools import write_entries

    systems = [System.objects.get_or_create(kg=sample.kg, name=name, defaults={
        "origin": System.Origin.IMPORTED, "status": System.Status.READY})[0] for name in SYSTEMS]
    hits = synthetic_hits(sample, systems, depth, seed=sample.pk)
    with transaction.atomic():
        pool = Pool.objects.create(sample=sample, name=f"depth{depth}-synthetic", depth=depth,
                                   origin=Pool.Origin.IMPORTED, status=Pool.Status.DONE, finished_at=timezone.now())
        pool.systems.set(systems)
        write_entries(pool, hits)
    return pool


def random_system(kg, name: str = "random-distmult", dim: int = 8):
    """A trained-looking system with random weights (no training at this size): evaluation scores with it."""
    import torch

    from pooling.kge import save_checkpoint
    from pooling.kge.models import build_model
    from pooling.models import System
    from pooling.services.systems import create_system, training_config
    from pooling.storage import storage_path

    existing = System.objects.filter(kg=kg, name=name, status=System.Status.READY).first()
    if existing is not None:
        return existing
    config = training_config("distmult", dim=dim, epochs=1)
    system = create_system(kg, "distmult", name=name, config=config)
    torch.manual_seed(0)
    model = build_model("distmult", kg.num_entities, kg.num_relations, **config["hyperparameters"])
    relative = f"systems/{kg.pk}-{kg.name}/{system.pk}-{system.name}.pt"
    save_checkpoint(storage_path(relative), model, config, {})
    System.objects.filter(pk=system.pk).update(status=System.Status.READY, checkpoint_file=relative)
    system.refresh_from_db()
    return system


def labels_file(campaign, path: Path, share: float, seed: int = 0) -> int:
    """Write ``h r t Y|N`` (keys) for a random ``share`` of the campaign's items; returns the line count."""
    from annotation.models import Item

    rows = list(Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk")
                .values_list("head__key", "relation__key", "tail__key"))
    rng = np.random.default_rng(seed)
    chosen = rng.random(len(rows)) < share
    answers = rng.random(len(rows)) < 0.3
    with path.open("w", encoding="utf-8") as out:
        for (h, r, t), keep, yes in zip(rows, chosen.tolist(), answers.tolist()):
            if keep:
                out.write(f"{h}\t{r}\t{t}\t{'Y' if yes else 'N'}\n")
    return int(chosen.sum())


def stage_campaign(context) -> None:
    attach_database(context)
    from annotation.models import Campaign
    from annotation.services.campaigns import create_campaign
    from annotation.services.exports import FORMATS, export_judgments
    from annotation.services.filtering import apply_filter
    from annotation.services.imports import import_judgments
    from pooling.models import Sample
    from pooling.services.samples import draw_sample

    kg = context.facts["kg"]
    print(f"campaign on {kg.name} ({kg.num_entities:,} entities)", flush=True)
    started = time.perf_counter()
    old = Campaign.objects.filter(name=CAMPAIGN).first()
    if old is not None:  # a re-run on the same database: start over (the sample takes its pool and campaign)
        from evaluation.models import EvaluationRun

        EvaluationRun.objects.filter(sample__kg=kg).delete()
        Campaign.objects.filter(pk=old.pk).delete()
    Sample.objects.filter(kg=kg, name=f"scale-{SAMPLE_SIZE}").delete()
    size = min(SAMPLE_SIZE, kg.num_test)  # tiny KGs (the test) have fewer test triples
    sample = _step("sample", lambda: draw_sample(kg, size=size, seed=0, name=f"scale-{SAMPLE_SIZE}"),
                   size, "triples")
    pool = _step(f"pool (synthetic, depth {DEPTH})", lambda: synthetic_pool(sample))
    entries = pool.entries.count()
    print(f"  {sample.questions.count():,} questions, {entries:,} pool entries", flush=True)
    campaign = _step("create campaign", lambda: create_campaign(CAMPAIGN, pool), entries, "items")
    report = _step("trivial filters", lambda: apply_filter(campaign, ["type", "cardinality", "reflexive"]),
                   entries, "items")
    print(f"  {report.applied:,} automatic negatives", flush=True)
    path = context.folder / f"labels-{sample.pk}.tsv"
    lines = labels_file(campaign, path, LABELLED_SHARE)
    imported = _step("import labels", lambda: import_judgments(campaign, path), lines, "lines")
    print(f"  {imported.labelled:,} items labelled", flush=True)
    for fmt in FORMATS:
        if fmt == "qrels-annotator":
            continue  # needs a person's answers; none here
        out = io.StringIO()
        records = _step(f"export {fmt}", lambda fmt=fmt, out=out: export_judgments(campaign, fmt, out))
        print(f"    {records:,} records, {len(out.getvalue()) / 2**20:.1f} MiB", flush=True)
    from evaluation.services.evaluate import create_run, run_evaluation

    system = random_system(kg)
    run = create_run(sample, systems=[system], campaign=campaign, name="scale")
    try:
        _step("evaluation (random model)", lambda: run_evaluation(run, figures=False))
    except Exception as exc:  # noqa: BLE001 - reported, the pages stage still runs
        print(f"  evaluation failed: {type(exc).__name__}: {exc}", flush=True)
    run.refresh_from_db()
    print(f"  evaluation {run.status} {run.error[:200]}", flush=True)
    print(f"campaign stage {time.perf_counter() - started:.1f} s", flush=True)
    context.facts["campaign"] = campaign


# ------------------------------------------------------------------------------------ pages
def page_urls(campaign=None) -> list[str]:
    """Every admin page of every registered model (changelist, search, add, change of the first row) and the
    product's pages (of ``campaign``, the newest campaign by default)."""
    from django.contrib import admin
    from django.urls import reverse

    from annotation.models import Assignment, Campaign
    from evaluation.models import EvaluationRun

    urls = [reverse("admin:index")]
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda pair: pair[0]._meta.label):
        info = model._meta.app_label, model._meta.model_name
        urls.append(reverse("admin:%s_%s_changelist" % info))
        if model_admin.search_fields:
            urls.append(reverse("admin:%s_%s_changelist" % info) + "?q=zz")
        urls.append(reverse("admin:%s_%s_add" % info))
        first = model_admin.get_queryset(None).order_by("pk").values_list("pk", flat=True).first() \
            if model._meta.label != "annotation.Judgment" else None
        if first is not None:
            urls.append(reverse("admin:%s_%s_change" % info, args=[first]))
    urls += [reverse("home"), reverse("annotation:campaigns")]
    campaign = campaign or Campaign.objects.order_by("-pk").first()
    if campaign is not None:
        for name in ("campaign", "guidelines", "recent_answers", "manage", "manage_members", "manage_domains",
                     "manage_order", "manage_simulation", "manage_filter", "manage_guidelines", "manage_templates",
                     "manage_agreement", "manage_quality", "manage_audit", "judge_next"):
            urls.append(reverse(f"annotation:{name}", args=[campaign.name]))
        hand_out = Assignment.objects.filter(item__campaign=campaign).order_by("-pk").first()
        if hand_out is not None:
            urls.append(reverse("annotation:judge_item", args=[campaign.name, hand_out.pk]))
    urls += [reverse("evaluation:runs"), reverse("evaluation:new")]
    run = EvaluationRun.objects.order_by("-pk").first()
    if run is not None:
        urls += [reverse("evaluation:report", args=[run.pk]), reverse("evaluation:progress", args=[run.pk])]
    return urls


def time_pages(client, urls: list[str], repeats: int = 2) -> list[tuple[float, int, int, str]]:
    """(best milliseconds, status, bytes, url) of each page, after one untimed warm-up fetch."""
    timings = []
    for url in urls:
        client.get(url)
        best, status, size = float("inf"), 0, 0
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(url)
            best = min(best, (time.perf_counter() - started) * 1000)
            status, size = response.status_code, len(getattr(response, "content", b""))
        timings.append((best, status, size, url))
    return timings


def staff_client():
    """A test client logged in as a superuser who holds every role of every campaign (the judging pages are for
    members only)."""
    import logging

    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotation.models import Campaign, Membership, Role

    setup_test_environment()  # ALLOWED_HOSTS gets testserver
    logging.getLogger("django.request").setLevel(logging.ERROR)  # the refused add pages (403) are expected
    user, _ = get_user_model().objects.get_or_create(username="scale-admin", defaults={
        "is_staff": True, "is_superuser": True})
    for campaign in Campaign.objects.all():
        for role in Role.values:
            Membership.objects.get_or_create(campaign=campaign, user=user, role=role)
    client = Client()
    client.force_login(user)
    return client


def stage_pages(context) -> None:
    attach_database(context)
    client = staff_client()
    # judge_next hands out an item: fetch it once so judge_item has a hand-out to show
    urls = page_urls(context.facts.get("campaign"))
    [client.get(url) for url in urls if url.endswith("/judge/")]
    urls = page_urls(context.facts.get("campaign"))
    started = time.perf_counter()
    timings = sorted(time_pages(client, urls, repeats=int(os.environ.get("SCALE_PAGE_REPEATS", "2"))))
    for ms, status, size, url in timings:
        flag = "  SLOW" if ms > SLOW_MS else ""
        print(f"  {ms:8.1f} ms  {status}  {size / 1024:8.1f} KiB  {url}{flag}")
    ms, status, _size, url = timings[-1]
    slow = sum(1 for t in timings if t[0] > SLOW_MS)
    print(f"pages            {len(timings)} pages in {time.perf_counter() - started:.1f} s; slowest {ms:.0f} ms "
          f"({status}) {url}; {slow} over {SLOW_MS:.0f} ms", flush=True)
    context.facts["pages"] = timings
