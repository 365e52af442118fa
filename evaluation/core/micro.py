"""Answer-wise (micro) KGC metrics, SPEC 5.2: MR, MRR and Hits@K over the 2|T| head/tail rankings.

Inputs are flat arrays with one entry per ranking: the (possibly fractional) filtered rank of the
answer, the relation id of its triple, and its side (0 = head question, the answer is the head;
1 = tail question). Every breakdown is a grouped mean computed with ``np.bincount``.

Written per relation, Micro = sum_p w_p * mean over the 2 c_p rankings of relation p of f(rank);
with w_p = c_p / |T| (:func:`relation_distribution`) it is the plain mean over all rankings, and
:func:`reweighted` lets another relation distribution (e.g. the sparse set's) replace it.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

HEAD, TAIL = 0, 1
SIDE_NAMES: tuple[str, str] = ("head", "tail")
CATEGORIES: tuple[str, ...] = ("1-1", "1-N", "N-1", "N-N")
DEFAULT_HITS: tuple[int, ...] = (1, 3, 10)


def metric_names(hits: Sequence[int] = DEFAULT_HITS) -> list[str]:
    return ["MR", "MRR"] + [f"Hits@{k}" for k in hits]


def per_answer_values(ranks: np.ndarray, hits: Sequence[int] = DEFAULT_HITS) -> dict[str, np.ndarray]:
    """f(rank) of every ranking for each metric: rank, 1/rank, rank <= K."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if len(ranks) and not np.all(ranks >= 1):
        raise ValueError("ranks must be >= 1 (1-based filtered ranks)")
    values = {"MR": ranks, "MRR": 1.0 / ranks}
    for k in hits:
        values[f"Hits@{k}"] = (ranks <= k).astype(np.float64)
    return values


def micro_metrics(ranks: np.ndarray, hits: Sequence[int] = DEFAULT_HITS) -> dict[str, float]:
    """Plain means over all rankings (NaN when there is none)."""
    values = per_answer_values(ranks, hits)
    return {name: float(v.mean()) if len(v) else float("nan") for name, v in values.items()}


def grouped_metrics(
    ranks: np.ndarray,
    group: np.ndarray,
    num_groups: int | None = None,
    hits: Sequence[int] = DEFAULT_HITS,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Mean of each metric per integer group id; returns (metric -> values per group, counts).

    Groups without any ranking get NaN.
    """
    group = np.asarray(group, dtype=np.int64)
    if num_groups is None:
        num_groups = int(group.max()) + 1 if len(group) else 0
    counts = np.bincount(group, minlength=num_groups)
    means: dict[str, np.ndarray] = {}
    for name, values in per_answer_values(ranks, hits).items():
        totals = np.bincount(group, weights=values, minlength=num_groups)
        means[name] = np.divide(totals, counts, out=np.full(num_groups, np.nan), where=counts > 0)
    return means, counts


def _as_table(means: dict[str, np.ndarray], labels: Sequence[str], counts: np.ndarray
              ) -> dict[str, dict[str, float]]:
    return {label: {name: float(v[i]) for name, v in means.items()}
            for i, label in enumerate(labels) if counts[i] > 0}


def by_side(ranks: np.ndarray, side: np.ndarray, hits: Sequence[int] = DEFAULT_HITS
            ) -> dict[str, dict[str, float]]:
    """{'head': metrics, 'tail': metrics}."""
    means, counts = grouped_metrics(ranks, side, 2, hits)
    return _as_table(means, SIDE_NAMES, counts)


def by_relation(
    ranks: np.ndarray,
    relation: np.ndarray,
    relation_names: Sequence[str] | None = None,
    hits: Sequence[int] = DEFAULT_HITS,
) -> dict[str, dict[str, float]]:
    """Metrics per relation (keys: relation names, or str(relation id))."""
    relation = np.asarray(relation, dtype=np.int64)
    num = len(relation_names) if relation_names is not None else (int(relation.max()) + 1 if len(relation) else 0)
    labels = list(relation_names) if relation_names is not None else [str(i) for i in range(num)]
    means, counts = grouped_metrics(ranks, relation, num, hits)
    return _as_table(means, labels, counts)


def category_codes(relation_category: Sequence[str] | np.ndarray) -> np.ndarray:
    """Map per-relation category strings ('1-1', '1-N', 'N-1', 'N-N') to codes 0..3."""
    categories = np.asarray(relation_category, dtype=object)
    codes = np.full(len(categories), -1, dtype=np.int64)
    for code, name in enumerate(CATEGORIES):
        codes[categories == name] = code
    if np.any(codes < 0):
        bad = categories[codes < 0][0]
        raise ValueError(f"unknown relation category {bad!r}; expected one of {CATEGORIES}")
    return codes


def by_category_side(
    ranks: np.ndarray,
    relation: np.ndarray,
    side: np.ndarray,
    relation_category: Sequence[str] | np.ndarray,
    hits: Sequence[int] = DEFAULT_HITS,
) -> dict[str, dict[str, float]]:
    """Metrics per relation category x side, keys like '1-N/head'.

    ``relation_category[r]`` is the category of relation id r.
    """
    codes = category_codes(relation_category)[np.asarray(relation, dtype=np.int64)]
    group = codes * 2 + np.asarray(side, dtype=np.int64)
    labels = [f"{c}/{s}" for c in CATEGORIES for s in SIDE_NAMES]
    means, counts = grouped_metrics(ranks, group, len(labels), hits)
    return _as_table(means, labels, counts)


def macro_over_relations(
    ranks: np.ndarray, relation: np.ndarray, hits: Sequence[int] = DEFAULT_HITS
) -> dict[str, float]:
    """Unweighted mean over the relations that have rankings of their per-relation metric."""
    means, counts = grouped_metrics(ranks, relation, None, hits)
    present = counts > 0
    return {name: float(v[present].mean()) for name, v in means.items()}


def macro_over_groups(
    ranks: np.ndarray,
    relation: np.ndarray,
    group_of_relation: np.ndarray,
    hits: Sequence[int] = DEFAULT_HITS,
) -> dict[str, float]:
    """Unweighted mean over groups of relations (e.g. Freebase domains) of each group's micro metric.

    ``group_of_relation[r]`` is the integer group id of relation r; within a group rankings are
    pooled (answer-wise), then groups count equally.
    """
    group = np.asarray(group_of_relation, dtype=np.int64)[np.asarray(relation, dtype=np.int64)]
    means, counts = grouped_metrics(ranks, group, None, hits)
    present = counts > 0
    return {name: float(v[present].mean()) for name, v in means.items()}


def freebase_domain(relation_name: str) -> str:
    """First path segment of a Freebase relation: '/people/person/nationality' -> 'people'."""
    return relation_name.strip("/").split("/", 1)[0]


def group_codes(relation_names: Sequence[str], group_of: Mapping[str, str] | None = None
                ) -> tuple[np.ndarray, list[str]]:
    """Integer group id per relation and the group labels; default grouping: Freebase domain."""
    labels_per_relation = [group_of[name] if group_of is not None else freebase_domain(name)
                           for name in relation_names]
    labels = sorted(set(labels_per_relation))
    index = {label: i for i, label in enumerate(labels)}
    return np.array([index[label] for label in labels_per_relation], dtype=np.int64), labels


def relation_distribution(triple_relations: np.ndarray, num_relations: int | None = None) -> np.ndarray:
    """w_p = c_p / |T| from the relation id of every triple of a set (e.g. the sparse test set)."""
    triple_relations = np.asarray(triple_relations, dtype=np.int64)
    counts = np.bincount(triple_relations, minlength=num_relations or 0).astype(np.float64)
    return counts / counts.sum()


def reweighted(
    ranks: np.ndarray,
    relation: np.ndarray,
    weights: np.ndarray,
    hits: Sequence[int] = DEFAULT_HITS,
) -> dict[str, float]:
    """Micro = sum_p w_p * mean over the rankings of relation p, for a given relation distribution.

    ``weights[r]`` is the weight of relation id r; they are normalised to sum to 1. A relation with
    positive weight but no ranking makes the mixture undefined: ValueError.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError("weights must be non-negative with a positive sum")
    relation = np.asarray(relation, dtype=np.int64)
    # checked before grouping: bincount would grow past len(weights) and the division fail on the shapes
    if len(relation) and relation.max() >= len(weights):
        raise ValueError("a ranking has a relation id without a weight")
    means, counts = grouped_metrics(ranks, relation, len(weights), hits)
    missing = (weights > 0) & (counts == 0)
    if missing.any():
        raise ValueError(f"relations {np.flatnonzero(missing)[:5].tolist()} have weight but no ranking")
    used = weights > 0
    normalised = weights[used] / weights[used].sum()
    return {name: float(np.dot(normalised, v[used])) for name, v in means.items()}
