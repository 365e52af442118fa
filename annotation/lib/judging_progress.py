"""How much judging is enough (issue 20), Django-free: positives found, an estimate of the positives still
unjudged, and how stable the ranking of the pooled systems is as labels come in.

- Estimate: each (system, rank) cell's yield is the Beta(1, 1)-smoothed share of positives among its judged items;
  an unjudged item's chance is the best yield among the cells of its hits; the estimate is their sum. Within a
  cell items are alike whatever order judged them, so an adaptive order does not bias it the way a pool-wide
  yield would be.
- Stability: systems ranked by pool precision (positives among the judged items each retrieved, unjudged counted
  not relevant: what the labels so far say of each system), computed after the first k final labels for
  k = now, now - step, now - 2 step, ...; tau-b between consecutive points. A tau that stays near 1 means the
  last ``step`` labels changed nothing in the ranking.
"""
from __future__ import annotations

import numpy as np

from annotation.lib.judging_order import JudgingState, PoolView
from evaluation.core.kendall import kendall_tau_b


def unjudged_positives_estimate(pool: PoolView, state: JudgingState) -> float:
    if pool.hit_item.size == 0:
        return 0.0
    max_rank = int(pool.hit_rank.max())
    cell = pool.hit_system * (max_rank + 1) + pool.hit_rank
    cells = max(pool.num_systems, 1) * (max_rank + 1)
    judged_hit = state.judged[pool.hit_item]
    judged = np.bincount(cell[judged_hit], minlength=cells)
    positive = np.bincount(cell[judged_hit & state.positive[pool.hit_item]], minlength=cells)
    yield_ = (positive + 1.0) / (judged + 2.0)
    best = np.zeros(pool.num_items)
    np.maximum.at(best, pool.hit_item, yield_[cell])
    return float(best[~state.judged].sum())


def retrieved_pairs(pool: PoolView) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (system, item) pairs of the pool's hits, as two arrays."""
    keys = np.sort(pool.hit_system * max(pool.num_items, 1) + pool.hit_item)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys
    return keys // max(pool.num_items, 1), keys % max(pool.num_items, 1)


def pool_precision(pool: PoolView, judged: np.ndarray, positive: np.ndarray,
                   pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per system: positives among the distinct items it retrieved / items it retrieved. ``pairs``:
    ``retrieved_pairs(pool)`` when the caller computes several precisions of one pool."""
    system, item = retrieved_pairs(pool) if pairs is None else pairs
    retrieved = np.bincount(system, minlength=pool.num_systems)
    found = np.bincount(system[judged[item] & positive[item]], minlength=pool.num_systems)
    return found / np.maximum(retrieved, 1)


def ranking_stability(pool: PoolView, sequence: np.ndarray, positive: np.ndarray, *, step: int = 200,
                      points: int = 6) -> list[dict]:
    """``sequence``: item indices in the order their labels became final; ``positive``: (n,) labels.
    Rows (labels, tau-b against the point ``step`` labels earlier), newest first."""
    sequence = np.asarray(sequence, dtype=np.int64)
    counts = [int(sequence.size) - k * step for k in range(points + 1)]
    counts = [c for c in counts if c >= 0]
    pairs = retrieved_pairs(pool)  # once: the same pairs at every point (a sort of every hit: 11 ms at 76,583)
    scores = []
    for count in counts:
        judged = np.zeros(pool.num_items, dtype=bool)
        judged[sequence[:count]] = True
        scores.append(pool_precision(pool, judged, positive, pairs))
    rows = []
    for i in range(len(counts) - 1):
        tau = kendall_tau_b(scores[i], scores[i + 1]) if pool.num_systems > 1 else float("nan")
        rows.append({"labels": counts[i], "previous": counts[i + 1], "tau": tau})
    return rows
