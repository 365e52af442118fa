"""Kendall's tau-b between system orderings (SPEC 5.5). Pure numpy/scipy/pandas, no Django.

tau-b = (n_concordant - n_discordant) / sqrt((n0 - n_ties_x) (n0 - n_ties_y)), n0 = n (n - 1) / 2; pairs
tied in either vector count as neither concordant nor discordant. It is undefined (NaN) when one vector is
constant, as in scipy.

Direction: the metrics of a table are "higher is better" except MR-like ones (name ``MR`` or starting with
``MR_`` / ``mean_rank``, case-insensitive). Tau between two score vectors is unchanged when *both* are
negated, so as long as the two tables being compared use the same direction for a metric (they always do:
it is the same metric on two label sets) the direction does not change tau. ``compare_metric_tables`` still
orients every metric to "higher is better" so that the vectors it compares are goodness scores.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# scipy.stats and pandas are imported where they are used: together 0.6 s, and the site's views import this module
# (through evaluation.core.summary), so every web worker and manage.py command would pay it at start.

__all__ = [
    "kendall_tau_b",
    "kendall_tau_b_batched",
    "higher_is_better",
    "compare_metric_tables",
]


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """tau-b of two score vectors over the same systems (scipy's O(n log n) implementation)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"need two 1-D vectors of equal length, got {x.shape} and {y.shape}")
    if len(x) < 2:
        return float("nan")
    from scipy import stats

    return float(stats.kendalltau(x, y, variant="b").statistic)


def _pair_signs(values: np.ndarray, first: np.ndarray, second: np.ndarray, rtol: float) -> np.ndarray:
    diff = values[..., first] - values[..., second]
    if rtol > 0:
        # Means computed in different summation orders differ by rounding noise; treat those as ties.
        scale = np.max(np.abs(values), axis=-1, keepdims=True)
        diff = np.where(np.abs(diff) <= rtol * scale, 0.0, diff)
    return np.sign(diff)


def kendall_tau_b_batched(x: np.ndarray, y: np.ndarray, rtol: float = 0.0) -> np.ndarray:
    """tau-b along the last axis (the systems) of broadcastable arrays ``x`` (..., n) and ``y`` (..., n).

    Enumerates all n (n - 1) / 2 system pairs, so it is meant for few systems (13 systems: 78 pairs) and
    many rankings at once (draws x metrics). Differences with |dx| <= rtol * max|x| count as ties (default:
    exact comparison, identical to scipy). NaN where either ranking is constant or has a NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = np.broadcast_shapes(x.shape, y.shape)[-1]
    first, second = np.triu_indices(n, k=1)
    sign_x = _pair_signs(x, first, second, rtol)
    sign_y = _pair_signs(y, first, second, rtol)
    numerator = (sign_x * sign_y).sum(axis=-1)
    untied_x = np.abs(sign_x).sum(axis=-1)  # n0 - n_ties_x (NaN propagates)
    untied_y = np.abs(sign_y).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = numerator / np.sqrt(untied_x * untied_y)
    return np.where((untied_x == 0) | (untied_y == 0), np.nan, tau)


def higher_is_better(metric: str) -> bool:
    """False for MR-like metrics: ``MR``, ``MR_*`` and ``mean_rank*`` (case-insensitive)."""
    name = metric.strip().lower()
    return not (name == "mr" or name.startswith("mr_") or name.startswith("mean_rank"))


def _as_frame(table: pd.DataFrame | np.ndarray, metrics: Sequence[str] | None) -> pd.DataFrame:
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table
    values = np.asarray(table, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("a metric table must be 2-D: systems x metrics")
    columns = list(metrics) if metrics is not None else [str(i) for i in range(values.shape[1])]
    return pd.DataFrame(values, columns=columns)  # arrays: rows are aligned by position


def compare_metric_tables(
    table_a: pd.DataFrame | np.ndarray,
    table_b: pd.DataFrame | np.ndarray,
    metrics: Sequence[str] | None = None,
) -> pd.Series:
    """tau-b per common metric between two systems x metrics tables (e.g. sparse vs completed labels).

    DataFrames are aligned on their index (system names) and columns (metric names); the common systems and
    metrics are used, in the order of ``table_a``. Plain arrays must have the same systems in the same row
    order; ``metrics`` names their columns. Returns a Series metric -> tau (NaN when undefined).
    """
    import pandas as pd

    frame_a, frame_b = _as_frame(table_a, metrics), _as_frame(table_b, metrics)
    systems = [s for s in frame_a.index if s in set(frame_b.index)]
    common_metrics = [m for m in frame_a.columns if m in set(frame_b.columns)]
    if len(systems) < 2:
        raise ValueError(f"need at least 2 common systems, got {len(systems)}")
    values_a = frame_a.loc[systems, common_metrics].to_numpy(dtype=np.float64)
    values_b = frame_b.loc[systems, common_metrics].to_numpy(dtype=np.float64)
    orientation = np.array([1.0 if higher_is_better(str(m)) else -1.0 for m in common_metrics])
    taus = [
        kendall_tau_b(values_a[:, j] * orientation[j], values_b[:, j] * orientation[j])
        for j in range(len(common_metrics))
    ]
    return pd.Series(taus, index=pd.Index(common_metrics, name="metric"), name="tau", dtype=np.float64)
