"""Benchmark: entity-pair ranking of FB15k-237 (all 237 relations, top K = 100) vs the bare matrix products.

    nice -n 10 .venv/bin/python bench/pair_ranking.py [--relations 237] [--k 100] [--block-size 1024]

System: the project's DistMult (``pooling.kge.models.DistMult``, dim 200, seeded random initialisation: the time
does not depend on the weights) scored through ``pooling.kge.protocol_scoring.block_scorer`` and ranked by
``evaluation.core.pair_ranking.top_pairs``: every relation scores all E x E = 14,541^2 pairs (about 5.0e10 pair
scores for the 237 relations), blocked over heads, train + valid pairs excluded, top K kept.

Baseline: the bare products for the same shapes, (E x d) @ (d x E) per relation in the same head blocks, no
top-K, in NumPy (float32 sgemm; the faster of NumPy and torch on this machine, printed below). The two are
interleaved relation by relation so that a change of load on a shared machine hits both alike. Prints both
times and their ratio (issue #16's target: ratio <= 2), and, as a sanity check, MAP@K of the random model on the
test pairs (about 0).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.core.pair_ranking import known_pairs_by_relation, pair_ranking_metrics, top_pairs  # noqa: E402
from pooling.kge.models import DistMult  # noqa: E402
from pooling.kge.protocol_scoring import block_scorer  # noqa: E402
from bench.ranking import load_splits  # noqa: E402 - the same FB15k-237 reader

DIM = 200


def time_torch_vs_numpy(entities_t: np.ndarray, rows: int) -> tuple[float, float]:
    """Seconds of one (rows x d) @ (d x E) product in NumPy and in torch (after a warm-up each)."""
    left = np.random.default_rng(1).standard_normal((rows, entities_t.shape[0])).astype(np.float32)
    timings = []
    for product in (lambda: left @ entities_t,
                    lambda: torch.from_numpy(left) @ torch.from_numpy(np.ascontiguousarray(entities_t.T)).t()):
        product()
        start = time.perf_counter()
        for _ in range(3):
            product()
        timings.append((time.perf_counter() - start) / 3)
    return timings[0], timings[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relations", type=int, default=None, help="only the first N relations (default all)")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--block-size", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    splits, num_entities, num_relations = load_splits()
    relations = list(range(num_relations if args.relations is None else min(args.relations, num_relations)))
    torch.manual_seed(args.seed)
    model = DistMult(num_entities, num_relations, dim=DIM)
    score_block = block_scorer(model)
    known = known_pairs_by_relation(np.concatenate([splits["train"], splits["valid"]]), num_entities)
    entities_t = model.entity.weight.detach().numpy().T
    # Bare products: the same shapes, left factors of the same magnitude (the entity rows times a relation row).
    relation_rows = model.relation.weight.detach().numpy()
    print(f"FB15k-237: E = {num_entities:,}, {len(relations)} relations, d = {DIM}, K = {args.k}, "
          f"head blocks of {args.block_size}; {len(relations) * num_entities ** 2:.3e} pair scores; "
          f"torch threads {torch.get_num_threads()}, CPU count {os.cpu_count()}")
    numpy_s, torch_s = time_torch_vs_numpy(entities_t, args.block_size)
    print(f"one {args.block_size} x {DIM} @ {DIM} x {num_entities} product: NumPy {numpy_s * 1e3:.1f} ms, "
          f"torch {torch_s * 1e3:.1f} ms")

    bare_s = ranking_s = scoring_s = 0.0
    timed_calls = [0.0]

    def timed_score_block(relation: int, heads: np.ndarray):
        begin = time.perf_counter()
        block = score_block(relation, heads)
        timed_calls[0] += time.perf_counter() - begin
        return block

    top = {}
    checksum = 0.0
    for relation in relations:
        start = time.perf_counter()
        left_all = model.entity.weight.detach().numpy() * relation_rows[relation]
        for first in range(0, num_entities, args.block_size):
            product = left_all[first:first + args.block_size] @ entities_t
            checksum += float(product[0, 0])  # keep the result alive
        bare_s += time.perf_counter() - start

        timed_calls[0] = 0.0
        start = time.perf_counter()
        top[relation] = top_pairs(timed_score_block, relation, num_entities, args.k, block_size=args.block_size,
                                  exclude=known.get(relation))
        ranking_s += time.perf_counter() - start
        scoring_s += timed_calls[0]
        if relation % 20 == 19:
            print(f"  {relation + 1} relations: bare {bare_s:7.1f} s, ranking {ranking_s:7.1f} s "
                  f"(ratio {ranking_s / bare_s:.3f})", flush=True)

    relevant = {}
    for h, r, t in splits["test"]:
        if int(r) in top:
            relevant.setdefault(int(r), set()).add((int(h), int(t)))
    metrics = pair_ranking_metrics(top, relevant, args.k)
    pairs = len(relations) * num_entities ** 2
    print(f"bare matrix products : {bare_s:8.1f} s  ({pairs / bare_s:.3e} pair scores/s)")
    print(f"blocked pair ranking : {ranking_s:8.1f} s  ({pairs / ranking_s:.3e} pair scores/s); of which scoring "
          f"{scoring_s:.1f} s, selection + merge {ranking_s - scoring_s:.1f} s")
    print(f"ratio ranking / bare : {ranking_s / bare_s:.3f}  (target <= 2)")
    print(f"random DistMult on test pairs: MAP@{args.k} {metrics[f'MAP@{args.k}']:.5f}, "
          f"P@{args.k} {metrics[f'P@{args.k}']:.5f}, WMAP@{args.k} {metrics[f'WMAP@{args.k}']:.5f} "
          f"over {metrics['num_relations']} relations (checksum {checksum:.3g})")


if __name__ == "__main__":
    main()
