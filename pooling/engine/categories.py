"""Relation cardinality categories (1-1, 1-N, N-1, N-N), computed on the TRAIN split (SPEC 4.1)."""
from __future__ import annotations

import numpy as np

from .questions import as_triples

__all__ = ["CATEGORIES", "relation_categories", "mean_distinct_per_key"]

CATEGORIES = ("1-1", "1-N", "N-1", "N-N")


def mean_distinct_per_key(relation: np.ndarray, key: np.ndarray, value: np.ndarray, num_relations: int) -> np.ndarray:
    """Per relation r: mean over the distinct (r, key) of the number of distinct values (0 if none)."""
    pairs = np.unique(np.stack([relation, key, value], axis=1), axis=0)  # distinct (r, key, value)
    groups = np.unique(pairs[:, :2], axis=0)  # distinct (r, key)
    num_values = np.bincount(pairs[:, 0], minlength=num_relations).astype(np.float64)
    num_keys = np.bincount(groups[:, 0], minlength=num_relations).astype(np.float64)
    means = np.zeros(num_relations, dtype=np.float64)
    np.divide(num_values, num_keys, out=means, where=num_keys > 0)
    return means


def relation_categories(
    train_triples: np.ndarray, num_relations: int, threshold: float = 1.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(categories, tph, hpt) per relation.

    tph = mean number of distinct tails per (r, h); hpt = mean number of distinct heads per (r, t); a side
    is "many" when its mean >= ``threshold``: 1-N (tph many), N-1 (hpt many), N-N (both), else 1-1.
    Relations absent from train get tph = hpt = 0 and category '1-1': with no evidence of multiple answers
    the trivial filter would treat a second answer as false; callers can spot them with ``tph == 0``.
    """
    triples = as_triples(train_triples)
    heads, relations, tails = triples[:, 0], triples[:, 1], triples[:, 2]
    if relations.size and relations.max() >= num_relations:
        raise ValueError("relation id >= num_relations")
    tph = mean_distinct_per_key(relations, heads, tails, num_relations)
    hpt = mean_distinct_per_key(relations, tails, heads, num_relations)
    many_tails = tph >= threshold
    many_heads = hpt >= threshold
    # index into CATEGORIES: bit 0 = many tails (1-N), bit 1 = many heads (N-1)
    categories = np.array(CATEGORIES, dtype=object)[many_tails.astype(int) + 2 * many_heads.astype(int)]
    return categories.astype("<U3"), tph, hpt
