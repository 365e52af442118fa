"""The ``pool`` stage of bench/scale.py (issue 18): a depth-10 pool of about 2,000 test questions on the synthetic KG.

A DistMult with random weights (d=64, seeded) is stored as a system, as a trained one would be; a uniform sample of
1,000 test triples (about 2,000 head and tail questions) is drawn and its pool built in this process by the product's
own steps (``build_pool_now``: the ranking chunks of ``KGPOOL_POOL_CHUNK_QUESTIONS`` questions, filtered by every
known triple, entity blocks above ``RANK_MEMORY_MB``, then the merge into pool rows). Needs the ``import`` stage
first (``--stages generate,import,pool``). ``SCALE_PROFILE=1`` prints the build's cProfile (top 25 by cumulative time, top 15 by own time).
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import time
from typing import Any

SAMPLE_TRIPLES = 1_000  # -> about 2,000 questions (head and tail)
DEPTH = 10
DIM = 64


def random_system(kg: Any, name: str) -> Any:
    """A ready system whose checkpoint holds a seeded random DistMult (what a pool build loads)."""
    import torch

    from pooling.kge import DistMult, save_checkpoint
    from pooling.models import System
    from pooling.services.systems import create_system
    from pooling.storage import storage_path

    torch.manual_seed(0)
    model = DistMult(kg.num_entities, kg.num_relations, dim=DIM)
    config = {"architecture": "distmult", "dim": DIM, "random_weights": True}
    system = create_system(kg, "distmult", name=name, config=config)
    relative = f"systems/{kg.pk}-{kg.name}/{system.pk}-{system.name}.pt"
    save_checkpoint(storage_path(relative), model, config, {})
    System.objects.filter(pk=system.pk).update(status=System.Status.READY, checkpoint_file=relative)
    system.refresh_from_db()
    return system


def stage_pool(context: Any) -> None:
    import scale  # bench/scale.py's helpers (this stage is registered there)
    from scale_pages import attach_database  # the KG an earlier run imported, when this run did not import it

    attach_database(context)
    from django.conf import settings

    from pooling.selectors.pools import sample_questions
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import draw_sample

    kg = context.facts["kg"]
    system = random_system(kg, f"random-distmult-{int(time.time())}")
    sample = draw_sample(kg, size=SAMPLE_TRIPLES, seed=context.args.seed, name=f"scale-{int(time.time())}")
    num_questions = len(sample_questions(sample))
    pool = create_pool(sample, [system], depth=DEPTH)
    stages: dict[str, float] = {}
    started = time.perf_counter()

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            stages[stage] = time.perf_counter() - started

    profiler = cProfile.Profile() if os.environ.get("SCALE_PROFILE") == "1" else None
    if profiler is not None:
        profiler.enable()
    pool, measure = scale.measured(lambda: build_pool_now(pool, device="cpu", progress=progress))
    if profiler is not None:
        profiler.disable()
    scale.report("pool", measure, num_questions, "questions")
    entries = pool.entries.count()
    budget = settings.KGPOOL_RANK_MEMORY_BYTES
    chunk = pool.chunk_size
    dense = chunk * kg.num_entities * 4
    print(f"           {num_questions:,} questions x {kg.num_entities:,} entities, DistMult d={DIM} (random weights), "
          f"depth {DEPTH}: {entries:,} pool entries; ranking chunks {stages.get('rank chunks', float('nan')):.2f} s, "
          f"merge {measure.seconds - stages.get('rank chunks', 0.0):.2f} s; chunks of {chunk} questions: "
          f"dense scores {dense / 2**20:,.0f} MiB vs budget {budget / 2**20:,.0f} MiB "
          f"({'entity blocks' if dense > budget else 'unblocked'})", flush=True)
    if profiler is not None:
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(15)
        print(text.getvalue())
