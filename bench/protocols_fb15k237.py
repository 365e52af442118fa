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
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.fb15k237_setup import DATA, embedded_django, published_sample, timed, trained_system  # noqa: E402


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
    embedded_django(args.keep, args.threads)
    import pandas as pd

    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from evaluation.services.protocol_report import protocol_lines

    print("-- setup")
    sample = published_sample()
    systems = [trained_system(sample.kg, architecture, f"{architecture}-d{args.dim}-e{args.epochs}", epochs=args.epochs,
                              dim=args.dim, threads=args.threads, lr=0.01)
               for architecture in ("distmult", "complex")]
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
