"""Reproducible sampling of test triples and the relation-distribution check (SPEC 3)."""
from __future__ import annotations

import random

import numpy as np

__all__ = ["sample_test_indices", "stratified_sample_indices", "relation_kl_divergence"]


def sample_test_indices(num_test: int, size: int, seed: int) -> np.ndarray:
    """``sorted(random.Random(seed).sample(range(num_test), size))`` as int64.

    Python's own ``random`` on purpose: it is what reproduces the published FB15k-237 sample (seed 42).
    """
    if not 0 <= size <= num_test:
        raise ValueError(f"cannot sample {size} of {num_test}")
    return np.array(sorted(random.Random(seed).sample(range(num_test), size)), dtype=np.int64)


def stratified_sample_indices(relations: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Sorted indices whose relation mix follows the full set's (per-relation proportional allocation).

    Each relation gets floor(size * share) triples; the remaining slots go to the largest remainders
    (ties: smaller relation id). Within a relation the triples are a seeded ``random.Random`` sample.
    """
    relations = np.asarray(relations, dtype=np.int64)
    if not 0 <= size <= relations.size:
        raise ValueError(f"cannot sample {size} of {relations.size}")
    unique_relations, counts = np.unique(relations, return_counts=True)
    exact = counts * (size / max(relations.size, 1))
    allocation = np.floor(exact).astype(np.int64)
    remainder_order = np.lexsort((unique_relations, -(exact - allocation)))
    allocation[remainder_order[: size - int(allocation.sum())]] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for relation, quota in zip(unique_relations.tolist(), allocation.tolist()):
        members = np.flatnonzero(relations == relation).tolist()
        chosen.extend(rng.sample(members, quota))
    return np.array(sorted(chosen), dtype=np.int64)


def relation_kl_divergence(sample_relations: np.ndarray, full_relations: np.ndarray) -> float:
    """KL(sample || full) of the relation distributions, natural log.

    This direction is finite (every sampled relation occurs in the full set); the reverse is infinite
    as soon as a relation is missing from the sample. On the published FB15k-237 sample (1,023 of 20,466,
    seed 42) it gives 0.1031; SPEC 3 quotes 0.0889, which no plain variant reproduces (see the tests).
    """
    sample_relations = np.asarray(sample_relations, dtype=np.int64)
    full_relations = np.asarray(full_relations, dtype=np.int64)
    if sample_relations.size == 0 or full_relations.size == 0:
        raise ValueError("both relation lists must be non-empty")
    size = int(max(sample_relations.max(), full_relations.max())) + 1
    sample_p = np.bincount(sample_relations, minlength=size) / sample_relations.size
    full_p = np.bincount(full_relations, minlength=size) / full_relations.size
    present = sample_p > 0
    if np.any(full_p[present] == 0):
        return float("inf")
    return float(np.sum(sample_p[present] * np.log(sample_p[present] / full_p[present])))
