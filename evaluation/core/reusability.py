"""Pool reusability by leaving systems out (Zobel, SIGIR 1998), Django-free.

For each group of pooled systems (one system, or a whole architecture family), the pool is rebuilt without
them: the items only they retrieved lose their labels (they become unjudged, as they would be for a new model
that did not contribute to the pool). Every system is scored on those reduced labels; the left-out systems'
metrics and places in the ranking are compared with those on the full labels. Large drops mean the judged set
would not evaluate a new model fairly.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from evaluation.core.kendall import higher_is_better, kendall_tau_b

#: scores(kept items mask) -> metric -> value per system
ScoreFn = Callable[[np.ndarray], Mapping[str, np.ndarray]]


def places(values: np.ndarray, metric: str) -> np.ndarray:
    """1-based place of each system (1 = best; ties share the better place)."""
    values = np.asarray(values, dtype=np.float64)
    oriented = values if higher_is_better(metric) else -values
    return 1 + (oriented[None, :] > oriented[:, None]).sum(axis=1)


def leave_out(names: Sequence[str], groups: Sequence[tuple[str, Sequence[int]]],
              kept_items: Callable[[Sequence[int]], np.ndarray], score: ScoreFn,
              metrics: Sequence[str] | None = None) -> list[dict]:
    """One row per (group, left-out system, metric): full and reduced value, change, places, and tau-b of the
    whole ranking (full vs reduced labels). ``kept_items(systems)`` is the mask of pool items the other systems
    retrieve."""
    full = {m: np.asarray(v, dtype=np.float64) for m, v in score(kept_items([])).items()}
    metrics = list(metrics) if metrics is not None else list(full)
    rows = []
    for group, members in groups:
        kept = kept_items(list(members))
        reduced = {m: np.asarray(v, dtype=np.float64) for m, v in score(kept).items()}
        for metric in metrics:
            before, after = full[metric], reduced[metric]
            # tau-b needs no orientation (negating both rankings keeps every pair's concordance) and is NaN for
            # fewer than two systems
            tau = kendall_tau_b(before, after)
            place_before, place_after = places(before, metric), places(after, metric)
            for system in members:
                delta = after[system] - before[system]
                rows.append({
                    "group": group, "system": names[system], "metric": metric, "items_left_out": int((~kept).sum()),
                    "full": float(before[system]), "reduced": float(after[system]), "change": float(delta),
                    "relative_change": float(delta / before[system]) if before[system] else float("nan"),
                    "place_full": int(place_before[system]), "place_reduced": int(place_after[system]),
                    "tau_full_vs_reduced": float(tau),
                })
    return rows
