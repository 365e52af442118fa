"""The summary of an evaluation report for people (issue 15): the systems ranked by one metric on the sparse and on
the completed labels, side by side, with Kendall's tau-b between the two rankings; and the best value of each column
of a table. Pure Python + scipy (through :mod:`evaluation.core.kendall`), no Django.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.core.kendall import kendall_tau_b

# Below this many systems tau-b takes few values (3 systems: -1, -1/3, 1/3, 1), so one swap moves it a lot.
MIN_SYSTEMS_FOR_TAU = 5
# Lower is better: ranks (MR, the adjusted AMR, geometric / harmonic / median rank). Spreads have no "best".
LOWER_IS_BETTER = frozenset({"MR", "AMR", "GMR", "HMR", "MedR"})
NO_BEST = frozenset({"RankStd", "RankVar", "RankMAD"})


def metric_direction(metric: str) -> int:
    """+1 when a higher value is better, -1 when lower is, 0 when neither (a spread, a count)."""
    base = metric.split("_", 1)[1] if metric.startswith(("micro_", "macro_")) else metric
    if base in NO_BEST:
        return 0
    return -1 if base in LOWER_IS_BETTER else 1


def _present(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def best_rows(values: Sequence[Sequence[float | None]], directions: Sequence[int]) -> list[set[int]]:
    """Per column, the indices of the rows holding its best value (ties: all of them; none when the column has no
    direction, fewer than two values, or all values equal)."""
    best: list[set[int]] = []
    for column, direction in enumerate(directions):
        cells = [(row, line[column]) for row, line in enumerate(values) if _present(line[column])]
        if not direction or len(cells) < 2 or len({v for _r, v in cells}) == 1:
            best.append(set())
            continue
        target = max(v * direction for _r, v in cells)
        best.append({row for row, v in cells if v * direction == target})
    return best


@dataclass(frozen=True)
class Ranked:
    rank: int  # competition ranking: tied systems share a rank (1, 1, 3)
    system: str
    value: float | None


@dataclass(frozen=True)
class RankingSummary:
    metric: str
    sparse: list[Ranked]
    completed: list[Ranked]  # empty without completed labels
    tau: float | None  # Kendall's tau-b between the two rankings (None: no completed labels, or undefined)

    @property
    def systems(self) -> int:
        return len(self.sparse)

    @property
    def coarse(self) -> bool:
        return self.tau is not None and self.systems < MIN_SYSTEMS_FOR_TAU

    @property
    def side_by_side(self) -> list[tuple[Ranked | None, Ranked | None]]:
        """Row k: the k-th system on the sparse labels and the k-th on the completed labels."""
        return [(self.sparse[k] if k < len(self.sparse) else None,
                 self.completed[k] if k < len(self.completed) else None)
                for k in range(max(len(self.sparse), len(self.completed)))]


def ranking(values: dict[str, float | None], metric: str) -> list[Ranked]:
    """Systems best first by ``metric`` (missing values last, then by name)."""
    direction = metric_direction(metric) or 1
    known = sorted((s for s, v in values.items() if _present(v)), key=lambda s: (-direction * values[s], s))
    ranked: list[Ranked] = []
    for position, system in enumerate(known):
        tied = ranked and ranked[-1].value == values[system]
        ranked.append(Ranked(ranked[-1].rank if tied else position + 1, system, values[system]))
    missing = sorted(s for s, v in values.items() if not _present(v))
    return ranked + [Ranked(len(known) + 1, s, None) for s in missing]


def ranking_summary(tables: dict[str, list[dict]], metric: str) -> RankingSummary | None:
    """``tables``: label set -> records (``system`` and one key per metric), as in a run's summary.json. None when
    the sparse table lacks ``metric``."""
    sparse_rows = tables.get("sparse") or []
    if not sparse_rows or metric not in sparse_rows[0]:
        return None
    sparse = {row["system"]: row.get(metric) for row in sparse_rows}
    completed = {row["system"]: row.get(metric) for row in tables.get("completed") or []}
    tau = None
    both = [s for s in sparse if _present(sparse[s]) and _present(completed.get(s))]
    if len(both) >= 2:
        value = kendall_tau_b([sparse[s] for s in both], [completed[s] for s in both])
        tau = None if math.isnan(value) else value
    return RankingSummary(metric, ranking(sparse, metric), ranking(completed, metric) if completed else [], tau)
