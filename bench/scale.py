"""Scale benchmark (issue 18): a seeded synthetic power-law KG, then the campaign's steps on it, one stage each.

    python bench/scale.py --triples 1M                       # embedded SQLite in a fresh folder
    python bench/scale.py --triples 5M --database-url postgres://postgres@127.0.0.1:5432/kgpool_bench

Each stage prints its wall time, its throughput and its peak memory: the tracemalloc peak (Python and numpy
allocations made during the stage) and the growth of the process's maximum resident set over the stage (the
interpreter, Django and the modules loaded before the stage are the baseline, not counted). Stages so far:
``generate`` (write train/valid/test.txt, cached by spec), ``import`` (``import_kg``) and ``pool``
(bench/scale_pool.py: a depth-10 pool of 2,000 questions ranked by a random DistMult). Later steps of the
issue (one training epoch, pool build, pages, evaluation) go in as further functions in ``STAGES``.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.engine.synthkg import SyntheticKG, write  # noqa: E402  (Django-free)


def count(text: str) -> int:
    """1M, 5M, 20M, 250k or a plain number."""
    text = text.strip().lower().replace("_", "")
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if factor > 1 else text) * factor)


@dataclass
class Context:
    args: argparse.Namespace
    spec: SyntheticKG
    folder: Path
    facts: dict[str, object] = field(default_factory=dict)


@dataclass
class Measure:
    seconds: float
    cpu_seconds: float  # this process only (not the PostgreSQL server's)
    tracemalloc_peak: int
    rss_growth: int  # bytes


def measured(run: Callable[[], object]) -> tuple[object, Measure]:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if os.environ.get("SCALE_TRACEMALLOC", "1") == "1":  # SCALE_TRACEMALLOC=0: time without its overhead
        tracemalloc.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        result = run()
    finally:
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        _current, peak = tracemalloc.get_traced_memory()  # (0, 0) when not tracing
        tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return result, Measure(seconds, cpu_seconds, peak, rss_after - rss_before)


def report(stage: str, measure: Measure, items: int, unit: str) -> None:
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{stage:17s} {measure.seconds:7.2f} s (cpu {measure.cpu_seconds:6.2f} s) {items / max(measure.seconds, 1e-9):12,.0f} {unit}/s  "
          f"tracemalloc peak {measure.tracemalloc_peak / 2**20:8.1f} MiB  max RSS +{measure.rss_growth / 2**20:8.1f} MiB"
          f"  (load {load})", flush=True)


def stage_generate(context: Context) -> None:
    marker = context.folder / "spec.txt"
    if marker.exists() and marker.read_text() == repr(context.spec):
        print(f"generate   cached in {context.folder}")
        return
    counts, measure = measured(lambda: write(context.spec, context.folder))
    marker.write_text(repr(context.spec))
    report("generate", measure, sum(counts.values()), "triples")


def _setup_django(args: argparse.Namespace) -> None:
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["KGPOOL_VAR_DIR"] = tempfile.mkdtemp(prefix="kgpool-scale-", dir=args.workdir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def stage_import(context: Context) -> None:
    _setup_django(context.args)
    from django.db import connection

    from pooling.engine.kgfiles import SPLITS
    from pooling.services.kg_import import import_kg

    triples = sum(len(open(context.folder / f"{s}.txt", "rb").read().splitlines()) for s in SPLITS)
    name = f"scale-{context.spec.triples}"
    kg, measure = measured(lambda: import_kg(name, context.folder, replace=True))
    int64_arrays = 3 * 8 * triples
    report(f"import/{connection.vendor}", measure, triples, "triples")
    print(f"           {kg.num_entities:,} entities, {kg.num_relations:,} relations, {triples:,} triples; "
          f"int64 triple arrays {int64_arrays / 2**20:.1f} MiB (3x = {3 * int64_arrays / 2**20:.1f} MiB)")
    context.facts["kg"] = kg


from scale_pool import stage_pool  # noqa: E402  (bench/scale_pool.py)

STAGES: dict[str, Callable[[Context], None]] = {"generate": stage_generate, "import": stage_import}
STAGES["pool"] = stage_pool

from scale_train import stage_train  # noqa: E402  (bench/scale_train.py: one negative-sampling epoch)

STAGES["train"] = stage_train

from scale_pages import stage_campaign, stage_pages  # noqa: E402  (bench/scale_pages.py: campaign steps, page times)

STAGES.update(campaign=stage_campaign, pages=stage_pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--triples", type=count, default=count("1M"), help="1M, 5M, 20M... (default 1M)")
    parser.add_argument("--entities", type=count, help="default: a fifth of the triples")
    parser.add_argument("--relations", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database-url", help="PostgreSQL to import into (default: a fresh embedded SQLite)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kgpool-scale")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    args = parser.parse_args()
    spec = SyntheticKG(triples=args.triples, entities=args.entities or max(args.triples // 5, 2),
                       relations=args.relations, seed=args.seed)
    args.workdir.mkdir(parents=True, exist_ok=True)
    context = Context(args, spec, args.workdir / f"kg-{spec.triples}-{spec.entities}-{spec.relations}-{spec.seed}")
    for stage in args.stages.split(","):
        STAGES[stage.strip()](context)


if __name__ == "__main__":
    main()
