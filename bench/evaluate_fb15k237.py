"""Smoke benchmark: evaluate_sample at FB15k-237 scale (SPEC 5), timings per stage. Not part of the test suite.

    nice -n 19 .venv/bin/python bench/evaluate_fb15k237.py [--epochs 1] [--dim 32] [--keep DIR]

Setup (timed, not the subject): import FB15k-237 into a fresh SQLite database under a temporary KGPOOL_VAR_DIR,
the published sample (../shared/data/fb15k-237-pooled/sample_idxs.txt, 1,023 triples -> 1,745 questions, 2,046 micro rankings), three
systems -- one barely trained PyTorch DistMult (--epochs epochs of 1-N training, dimension --dim; the point is the
shapes, not the quality) and two imported random-score TREC runs (top --run-depth per question, seeded) -- and
their depth-10 pool (for the completed@d label sets). Labels: the
published final judgments (../shared/data/fb15k-237-pooled/judgments.tsv, 22,492 triples).

Timed: evaluate_sample cold (every judged pair scored, rank cache empty), then warm (rank cache full: no scoring,
no torch) with the analyses (t-test and, separately, Sakai's bootstrap), and write_outputs (CSV/JSON/PNG).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.fb15k237_setup import DATA, embedded_django, published_sample, timed, trained_system  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--keep", help="var dir to use and keep (default: a temporary one)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--run-depth", type=int, default=100, help="candidates per question of the random runs")
    args = parser.parse_args()
    var = embedded_django(args.keep, args.threads)
    import numpy as np

    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample, write_outputs
    from evaluation.services.labels import JudgmentsFile
    from pooling.models import Pool, System
    from pooling.selectors.pools import entity_keys, sample_questions
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.rankings import import_run

    print("-- setup")
    sample = published_sample()
    kg = sample.kg
    systems = [trained_system(kg, "distmult", "distmult-tiny", epochs=args.epochs, dim=args.dim, threads=args.threads)]
    sq = sample_questions(sample)
    keys = entity_keys(kg)

    def random_run(seed: int) -> System:
        rng = np.random.default_rng(seed)
        path = var / f"random-{seed}.run"
        with open(path, "w") as out:
            for qid in sq.qids:
                entities = rng.choice(len(keys), size=args.run_depth, replace=False)
                scores = np.sort(rng.random(args.run_depth))[::-1]
                out.writelines(f"{qid} Q0 {keys[e]} {i + 1} {s:.6f} random{seed}\n"
                               for i, (e, s) in enumerate(zip(entities.tolist(), scores.tolist())))
        return import_run(sample, path, name=f"random-{seed}")

    for seed in (1, 2):
        systems.append(System.objects.filter(kg=kg, name=f"random-{seed}").first() or timed(
            f"write + import random run {seed} (top-{args.run_depth} x {len(sq.qids)} questions)",
            lambda seed=seed: random_run(seed)))
    pool = Pool.objects.filter(sample=sample, status=Pool.Status.DONE).first() or timed(
        "depth-10 pool of the 3 systems", lambda: build_pool_now(create_pool(sample, systems, depth=10)))
    source = JudgmentsFile(DATA / "fb15k-237-pooled" / "judgments.tsv")

    def run(label: str, options: EvaluationOptions):
        stages: list[tuple[str, float]] = []
        last = [None]

        def progress(stage: str, done: int, total: int) -> None:
            name = stage.split(" ")[0]
            if name != last[0]:
                stages.append((name, time.perf_counter()))
                last[0] = name

        start = time.perf_counter()
        result = evaluate_sample(sample, systems=systems, source=source, pool=pool, options=options,
                                 progress=progress)
        total = time.perf_counter() - start
        print(f"evaluate_sample, {label:<41s} {total:8.2f} s")
        for stage, seconds in result.timings.items():
            print(f"    {stage:<54s} {seconds:8.2f} s")
        print(f"    rank pairs scored / cached: "
              + ", ".join(f"{n} {s.get('computed', 0)}/{s.get('cached', 0)}" for n, s in result.rank_stats.items()))
        return result

    print("-- evaluation (3 systems, labels: sparse, completed, completed@0..10)")
    base = EvaluationOptions(device="cpu")
    cold = run("cold rank cache, t-test", base)
    for key in ("sparse", "completed"):
        stats = cold.label_stats[key]
        print(f"    {key}: {stats['positives']} Y / {stats['negatives']} N triples, "
              f"{stats.get('micro_rankings', 0)} micro rankings")
    warm = run("warm rank cache, t-test", base)
    run("warm, Sakai bootstrap (1,000 resamples)", EvaluationOptions(device="cpu", dp_test="bootstrap"))
    run("warm, no analyses", EvaluationOptions(device="cpu", analyses=False))
    with tempfile.TemporaryDirectory() as out:
        timed("write_outputs (CSV/JSON + 6 PNG figures)", lambda: write_outputs(warm, out))
    print("-- tau-b sparse vs completed (3 systems: coarse)")
    print(warm.kendall.T.round(3).to_string())


if __name__ == "__main__":
    main()
