"""Issue 16 on FB15k-237 with the published judgments: triple classification with judged negatives vs corrupted
ones, entity-pair ranking and property prediction on the sparse vs the completed labels, two quickly trained systems,
through the evaluation service (the same code as an evaluation run). Not part of the test suite.

    nice -n 10 .venv/bin/python bench/protocols_fb15k237.py [--epochs 2] [--dim 64] [--k 100] [--keep DIR]

Setup (timed, not the subject): FB15k-237 into a fresh SQLite database under a temporary KGPOOL_VAR_DIR, the
published sample (../shared/data/fb15k-237-pooled/sample_idxs.txt, 1,023 triples), a DistMult and a ComplEx trained
for --epochs epochs (1-N, dimension --dim, seeded). Labels: the published final judgments (judgments.tsv, 22,492
triples: 2,738 Y, 19,754 N). Negatives: judged (the N labels), corrupted-typed (the replaced entity has a domain /
range type of the relation side, from relation_types.tsv) and corrupted-random, seed --seed. Printed: the protocol
tables, the tau-b between protocols and the time of each stage.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--k", type=int, default=100, help="K of MAP@K / P@K")
    parser.add_argument("--seed", type=int, default=0, help="seed of the corrupted negatives")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--protocols", default="classification,pair_ranking,property")
    parser.add_argument("--keep", help="var dir to use and keep (default: a temporary one)")
    args = parser.parse_args()
    var = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kgpool-bench-"))
    os.environ["KGPOOL_VAR_DIR"] = str(var)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import pandas as pd
    import torch

    torch.set_num_threads(args.threads)
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from evaluation.services.protocol_report import protocol_lines
    from pooling.models import KnowledgeGraph, Sample, System
    from pooling.services.kg_import import import_kg
    from pooling.services.samples import sample_from_file
    from pooling.services.systems import train_new_system

    def timed(label: str, fn):
        start = time.perf_counter()
        value = fn()
        print(f"{label:<60s} {time.perf_counter() - start:8.2f} s", flush=True)
        return value

    print(f"var dir {var}; torch threads {args.threads}")
    print("-- setup")
    kg = KnowledgeGraph.objects.filter(name="fb15k-237").first() or timed(
        "import FB15k-237 (310,116 triples)", lambda: import_kg("fb15k-237", DATA / "fb15k-237"))
    sample = Sample.objects.filter(kg=kg, name="published").first() or timed(
        "published sample (1,023 triples)",
        lambda: sample_from_file(kg, DATA / "fb15k-237-pooled" / "sample_idxs.txt", name="published"))
    systems = []
    for architecture in ("distmult", "complex"):
        name = f"{architecture}-d{args.dim}-e{args.epochs}"
        System.objects.filter(kg=kg, name=name).exclude(status=System.Status.READY).delete()  # an interrupted one
        systems.append(System.objects.filter(kg=kg, name=name, status=System.Status.READY).first() or timed(
            f"train {architecture} d={args.dim}, {args.epochs} epoch(s)",
            lambda architecture=architecture, name=name: train_new_system(
                kg, architecture, name=name, epochs=args.epochs, dim=args.dim, seed=0, eval_every=args.epochs,
                batch_size=1024, lr=0.01, device="cpu", num_threads=args.threads)))
    for system in systems:
        print(f"    {system.name}: filtered test MRR {system.test_mrr:.4f}")
    options = EvaluationOptions(device="cpu", analyses=False, protocols=tuple(args.protocols.split(",")),
                                negatives=("judged", "corrupted-typed", "corrupted-random"), negatives_seed=args.seed,
                                pair_k=args.k)
    print(f"-- evaluation: link prediction + {', '.join(options.protocols)}; K = {args.k}")
    stages: list[tuple[str, float]] = []

    def progress(stage: str, done: int, total: int) -> None:
        if not stages or stages[-1][0] != stage.split(" ")[0]:
            stages.append((stage.split(" ")[0], time.perf_counter()))

    source = JudgmentsFile(DATA / "fb15k-237-pooled" / "judgments.tsv")
    result = timed("evaluate_sample", lambda: evaluate_sample(sample, systems=systems, source=source,
                                                              options=options, progress=progress))
    for stage, seconds in result.timings.items():
        print(f"    {stage:<56s} {seconds:8.2f} s")
    with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4f}".format):
        for name in ("sparse", "completed"):
            print(f"\n== link prediction, {name} labels ==")
            print(result.tables[name][["micro_MRR", "micro_Hits@10", "macro_MRR"]].to_string())
        print("\n".join(protocol_lines(result.protocols)))
        negatives = result.protocols.negatives
        if not negatives.empty:
            print("\n== classification negatives ==")
            print(negatives.to_string(index=False))


if __name__ == "__main__":
    main()
