"""Simulation before spending (issue 20), Django-free: replay a judged set as the oracle and count, for a
judging order, the positives found and the stability of the system ranking against the number of judgments.

The oracle knows the final label of every pool item in the replay; an order picks ``batch`` items at a time
(people judge in parallel, and the live queue re-keys in batches), their labels are revealed (the reward),
and the order is asked again. At each checkpoint ``score`` ranks the systems on the labels known so far and
Kendall's tau-b against the ranking on the whole oracle (``reference``) is recorded, per metric.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from annotation.lib.judging_order import JudgingState, PoolView, order_items, tiebreak
from evaluation.core.kendall import higher_is_better, kendall_tau_b_batched

#: score(judged mask over the pool items) -> metric -> values per system (same system order as ``reference``)
ScoreFn = Callable[[np.ndarray], Mapping[str, np.ndarray]]

POSITIVES_TARGET = 0.9
TAU_TARGET = 0.9


@dataclass
class SimulationRun:
    order: str
    seed: int
    sequence: np.ndarray  # item indices in the order they were judged
    found: np.ndarray  # positives found after 1, 2, ... judgments
    checkpoints: np.ndarray  # judgments made at each scoring point
    taus: dict[str, np.ndarray] = field(default_factory=dict)  # metric -> tau-b at each checkpoint

    @property
    def total_positives(self) -> int:
        return int(self.found[-1]) if self.found.size else 0

    def judgments_for_positives(self, share: float = POSITIVES_TARGET) -> int:
        """Judgments needed to find ``share`` of the oracle's positives (0 when there are none)."""
        need = math.ceil(share * self.total_positives - 1e-9)
        if need <= 0:
            return 0
        return int(np.searchsorted(self.found, need, side="left")) + 1

    def judgments_for_tau(self, metric: str, target: float = TAU_TARGET) -> int | None:
        """Judgments from which tau-b stays >= ``target`` at every later checkpoint (None: never)."""
        taus = self.taus.get(metric)
        if taus is None or taus.size == 0:
            return None
        below = np.flatnonzero(~(taus >= target))  # NaN counts as below
        if below.size == 0:
            return int(self.checkpoints[0])
        if below[-1] == taus.size - 1:
            return None
        return int(self.checkpoints[below[-1] + 1])


def default_checkpoints(num_items: int, points: int = 50) -> np.ndarray:
    """``points`` evenly spaced numbers of judgments in 1..n (always including n)."""
    if num_items <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.ceil(np.linspace(0, num_items, points + 1)[1:]).astype(np.int64).clip(1, num_items))


#: Decisions (re-keys of the live queue) per replay / campaign: the positives found hardly depend on it (FB15k-237
#: case study, kg_aware: 2,863 judgments for 90% of them with 1,000 re-keys, 2,916 with 200, 2,884 with 50), and
#: each re-key of a big live queue rewrites most queue keys.
DECISIONS = 200


def default_batch(num_items: int) -> int:
    """Items picked per decision: about :data:`DECISIONS` decisions per replay (1 on small pools)."""
    return max(1, num_items // DECISIONS)


def oriented_taus(reference: Mapping[str, np.ndarray], values: Mapping[str, np.ndarray]) -> dict[str, float]:
    metrics = list(reference)
    x = np.array([reference[m] for m in metrics], dtype=np.float64)
    y = np.array([values[m] for m in metrics], dtype=np.float64)
    sign = np.array([1.0 if higher_is_better(m) else -1.0 for m in metrics])[:, None]
    taus = kendall_tau_b_batched(x * sign, y * sign, rtol=1e-12)
    return dict(zip(metrics, taus.tolist()))


def simulate(pool: PoolView, truth: np.ndarray, order: str, *, seed: int = 0, batch: int | None = None,
             checkpoints: Sequence[int] | None = None, score: ScoreFn | None = None,
             reference: Mapping[str, np.ndarray] | None = None) -> SimulationRun:
    """Judge every item of ``pool`` in ``order`` with ``truth`` (n,) bool as the oracle."""
    truth = np.asarray(truth, dtype=bool)
    n = pool.num_items
    if truth.shape != (n,):
        raise ValueError(f"the oracle needs one label per pool item ({n}), got {truth.shape}")
    batch = batch or default_batch(n)
    points = default_checkpoints(n) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    points = points[(points >= 1) & (points <= n)]
    judged = np.zeros(n, dtype=bool)
    positive = np.zeros(n, dtype=bool)
    ties = tiebreak(n, seed)
    sequence = np.empty(n, dtype=np.int64)
    done = 0
    static = order in ("random", "depth")  # no reward changes these: one sort
    if static:
        sequence[:] = order_items(order, pool, JudgingState(judged, positive), seed=seed, ties=ties)
    taus: dict[str, list[float]] = {}
    scored_at: list[int] = []
    next_point = 0
    while done < n:
        if static:
            picked = sequence[done:min(n, done + batch)]
        else:
            picked = order_items(order, pool, JudgingState(judged, positive), seed=seed, ties=ties,
                                 limit=min(batch, n - done))
        # stop a batch at the next checkpoint, so every checkpoint is scored on exactly its judgments
        if next_point < points.size:
            picked = picked[:max(1, int(points[next_point]) - done)]
        sequence[done:done + picked.size] = picked
        judged[picked] = True
        positive[picked] = truth[picked]
        done += picked.size
        while next_point < points.size and points[next_point] <= done:
            if score is not None and reference is not None:
                for metric, tau in oriented_taus(reference, score(judged.copy())).items():
                    taus.setdefault(metric, []).append(tau)
                scored_at.append(done)
            next_point += 1
    found = np.cumsum(truth[sequence])
    checkpoints_done = np.asarray(scored_at if scored_at else points, dtype=np.int64)
    return SimulationRun(order, seed, sequence, found, checkpoints_done,
                         {metric: np.asarray(values) for metric, values in taus.items()})
