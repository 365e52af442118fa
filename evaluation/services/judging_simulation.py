"""Simulation before spending (issue 20): replay a judged set as the oracle over a pool and compare judging
orders (``annotation/lib/judging_order.py``) by the positives they find and the stability of the system
ranking, against the number of judgments.

The oracle: a labels file (``h r t Y|N``) or a campaign's final labels. The replay covers the pool entries the
oracle labels, less those the trivial filters label N (a campaign's items of origin rule; for a file, the
filters' preview on the pool): those never reach people, so they are known from the start, like the sampled
test triples. The reference is every system's metrics on the whole oracle over the pool; at each checkpoint
the systems are scored on the sparse labels + rule negatives + the simulated judgments so far.
"""
from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from annotation.lib.judging_order import ORDERS, PoolView
from annotation.lib.judging_simulation import POSITIVES_TARGET, TAU_TARGET, SimulationRun, default_batch, simulate
from annotation.selectors.pool_view import PoolIndex, pool_view
from evaluation.services.label_scoring import LabelScorer
from evaluation.services.labels import LabelError, LabelSource, completed_label_set
from pooling.models import Pool, Sample, System

HEADLINE_METRICS = ("micro_MRR", "macro_MRR")
#: the files of a simulation's output folder the site serves
SITE_FILES = {"summary.csv": "text/csv", "curves.csv": "text/csv", "summary.json": "application/json",
              "positives.png": "image/png", "tau_micro_MRR.png": "image/png", "tau_macro_MRR.png": "image/png"}


def default_out(sample: Sample) -> Path:
    """Where ``simulate_judging`` writes by default, and where the campaign's page looks."""
    from django.conf import settings

    return Path(settings.VAR_DIR) / "simulations" / f"sample-{sample.pk}"


def load_summary(sample: Sample) -> dict[str, Any] | None:
    path = default_out(sample) / "summary.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


class SimulationError(Exception):
    """The simulation cannot run (no pool, no systems, no oracle labels on the pool); the message says why."""


@dataclass
class Oracle:
    """The replay's pool (people-judged items only) and labels, and the scorer of the systems."""

    view: PoolView  # the items people would judge
    truth: np.ndarray  # (n,) their oracle labels
    index: PoolIndex
    items: np.ndarray  # their indices in the whole pool's view
    scorer: LabelScorer | None
    label_item: np.ndarray  # per row of the scorer's label set: the replay item it is (-1: known from the start)
    rule_negatives: int
    uncovered: int  # pool entries without an oracle label (left out)

    def include(self, judged: np.ndarray) -> np.ndarray:
        """Rows of the label set known after the simulated judgments ``judged`` (over the replay items)."""
        known = self.label_item < 0
        known[~known] = judged[self.label_item[~known]]
        return known


def _triple_keys(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * num_relations + triples[:, 1]) * num_entities + triples[:, 2]


def _rule_entries(pool: Pool, campaign: Any | None) -> np.ndarray:
    if campaign is not None:
        from annotation.models import Item

        rows = Item.objects.filter(campaign=campaign, is_gold=False, label_origin=Item.Origin.RULE)
        return np.array(list(rows.values_list("entry_id", flat=True)), dtype=np.int64)
    from annotation.selectors.filtering import filter_preview

    return np.array(sorted(filter_preview(pool).fired), dtype=np.int64)


def build_oracle(sample: Sample, source: LabelSource, pool: Pool, systems: list[System] | None, *,
                 campaign: Any | None = None, score: bool = True) -> Oracle:
    kg = sample.kg
    if pool.sample_id != sample.pk:
        raise SimulationError(f"pool {pool.name} is not a pool of sample {sample.name}")
    try:
        judged = source.judged_triples(kg)
    except LabelError as exc:
        raise SimulationError(str(exc)) from None
    view, index = pool_view(pool)
    if view.num_systems == 0 or view.hit_item.size == 0:
        raise SimulationError(f"pool {pool.name} has no system hits: orders need to know which system retrieved what")
    num_e, num_r = max(kg.num_entities, 1), max(kg.num_relations, 1)
    completed = completed_label_set(sample, judged, pool)
    label_keys = _triple_keys(completed.triples, num_e, num_r)
    item_keys = _triple_keys(index.triples, num_e, num_r)
    order = np.argsort(label_keys)
    position = np.minimum(np.searchsorted(label_keys[order], item_keys), max(label_keys.size - 1, 0))
    covered = label_keys.size > 0
    covered = (label_keys[order][position] == item_keys) if covered else np.zeros(len(item_keys), dtype=bool)
    item_label_row = np.where(covered, order[position], -1)
    rule = np.zeros(view.num_items, dtype=bool)
    rule_items = index.items_of(_rule_entries(pool, campaign))
    rule[rule_items[rule_items >= 0]] = True
    people = np.flatnonzero(covered & ~rule)
    if people.size == 0:
        raise SimulationError(f"the oracle labels none of the pool's entries that people would judge "
                              f"({int(covered.sum())} covered, {int((covered & rule).sum())} of them by the filters)")
    truth = completed.positive[item_label_row[people]]
    # rows of the label set: the sampled triples and covered pool entries (oracle triples outside the pool drop out)
    in_pool = np.zeros(len(completed.triples), dtype=bool)
    in_pool[item_label_row[covered]] = True
    keep_rows = in_pool | (completed.depth == 0)
    label_item = np.full(len(completed.triples), -1, dtype=np.int64)
    label_item[item_label_row[people]] = np.arange(people.size)
    scorer = None
    if score:
        systems = systems if systems is not None else list(pool.systems.order_by("name"))
        if len(systems) < 2:
            raise SimulationError("ranking stability needs at least two systems")
        scorer = LabelScorer(sample, systems, completed.triples[keep_rows], completed.positive[keep_rows])
    return Oracle(view.subset(people), truth, index, people, scorer, label_item[keep_rows],
                  int((covered & rule).sum()), int((~covered).sum()))


@dataclass
class SimulationResult:
    orders: list[str]
    seeds: list[int]
    runs: list[SimulationRun]
    reference: dict[str, list[float]]
    systems: list[str]
    items: int
    positives: int
    rule_negatives: int
    uncovered: int
    seconds: float
    batch: int
    summary: list[dict[str, Any]] = field(default_factory=list)


def _stats(values: list[float | None]) -> dict[str, float | None]:
    known = [v for v in values if v is not None]
    if len(known) < len(values) or not known:
        return {"mean": None, "min": min(known) if known else None, "max": None}
    return {"mean": float(np.mean(known)), "min": float(min(known)), "max": float(max(known))}


def summarise(runs: list[SimulationRun], orders: list[str], items: int, metrics: list[str]) -> list[dict[str, Any]]:
    rows = []
    for order in orders:
        mine = [r for r in runs if r.order == order]
        positives = _stats([r.judgments_for_positives(POSITIVES_TARGET) for r in mine])
        row: dict[str, Any] = {"order": order, "seeds": len(mine), "items": items,
                               "judgments_90_positives": positives["mean"], "judgments_90_positives_min": positives["min"],
                               "judgments_90_positives_max": positives["max"]}
        for metric in metrics:
            reach = _stats([r.judgments_for_tau(metric, TAU_TARGET) for r in mine])
            row[f"judgments_tau90_{metric}"] = reach["mean"]
            row[f"judgments_tau90_{metric}_max"] = reach["max"]
        rows.append(row)
    return rows


def run_simulation(oracle: Oracle, orders: list[str], seeds: list[int], *, batch: int | None = None,
                   points: int = 50, log=lambda message: None) -> SimulationResult:
    unknown = [o for o in orders if o not in ORDERS]
    if unknown:
        raise SimulationError(f"unknown order(s) {', '.join(unknown)}; orders: {', '.join(ORDERS)}")
    started = time.perf_counter()
    reference = oracle.scorer.scores() if oracle.scorer is not None else {}
    n = oracle.view.num_items
    checkpoints = np.unique(np.ceil(np.linspace(0, n, points + 1)[1:]).astype(np.int64).clip(1, n))
    runs = []
    for order in orders:
        for seed in seeds:
            tick = time.perf_counter()
            score = (lambda judged: oracle.scorer.scores(oracle.include(judged))) if oracle.scorer else None
            run = simulate(oracle.view, oracle.truth, order, seed=seed, batch=batch, checkpoints=checkpoints,
                           score=score, reference=reference if oracle.scorer else None)
            runs.append(run)
            log(f"  {order} seed {seed}: 90% of positives after {run.judgments_for_positives()} of {n} judgments "
                f"({time.perf_counter() - tick:.1f} s)")
    metrics = list(reference)
    result = SimulationResult(list(orders), list(seeds), runs, {k: v.tolist() for k, v in reference.items()},
                              oracle.scorer.system_names if oracle.scorer else [], n, int(oracle.truth.sum()),
                              oracle.rule_negatives, oracle.uncovered, time.perf_counter() - started,
                              batch or default_batch(n))
    result.summary = summarise(runs, list(orders), n, metrics)
    return result


def ratios(result: SimulationResult) -> dict[str, Any]:
    """The issue's targets: the best adaptive order's judgments for 90% of the positives over the fewer of random's
    and depth's, and the share of the judgments after which tau-b stays >= 0.9 for micro and macro MRR."""
    rows = {row["order"]: row for row in result.summary}
    adaptive = [o for o in rows if o not in ("random", "depth") and rows[o]["judgments_90_positives"] is not None]
    baseline = [rows[o]["judgments_90_positives"] for o in ("random", "depth") if o in rows]
    out: dict[str, Any] = {"items": result.items, "positives": result.positives}
    if adaptive:
        best = min(adaptive, key=lambda o: rows[o]["judgments_90_positives"])
        out["best_adaptive"] = best
        out["best_judgments_90_positives"] = rows[best]["judgments_90_positives"]
        if baseline and all(b is not None for b in baseline):
            out["ratio_to_cheaper_baseline"] = rows[best]["judgments_90_positives"] / min(baseline)
        for metric in HEADLINE_METRICS:
            reach = rows[best].get(f"judgments_tau90_{metric}")
            out[f"tau90_{metric}_share"] = None if reach is None else reach / result.items
    for order, row in rows.items():
        out[f"{order}_judgments_90_positives"] = row["judgments_90_positives"]
        for metric in HEADLINE_METRICS:
            reach = row.get(f"judgments_tau90_{metric}")
            out[f"{order}_tau90_{metric}_share"] = None if reach is None else reach / result.items
    return out


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def write_outputs(result: SimulationResult, out: Path, *, figures: bool = True) -> list[Path]:
    """summary.csv, curves.csv (positives and tau per checkpoint, every order and seed), summary.json, PNGs."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    summary = out / "summary.csv"
    with summary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(result.summary[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(result.summary)
    written.append(summary)
    curves = out / "curves.csv"
    metrics = list(result.reference)
    with curves.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["order", "seed", "judgments", "positives_found", *[f"tau_{m}" for m in metrics]])
        for run in result.runs:
            for i, done in enumerate(run.checkpoints.tolist()):
                taus = [run.taus[m][i] if m in run.taus else "" for m in metrics]
                writer.writerow([run.order, run.seed, done, int(run.found[done - 1]), *taus])
    written.append(curves)
    data = {"orders": result.orders, "seeds": result.seeds, "systems": result.systems, "items": result.items,
            "positives": result.positives, "rule_negatives": result.rule_negatives, "uncovered": result.uncovered,
            "batch": result.batch, "seconds": round(result.seconds, 1), "reference": result.reference,
            "summary": result.summary, "ratios": ratios(result)}
    (out / "summary.json").write_text(json.dumps(_clean(data), indent=1), encoding="utf-8")
    written.append(out / "summary.json")
    if figures:
        written += plot_curves(result, out)
    return written


def plot_curves(result: SimulationResult, out: Path) -> list[Path]:
    """positives.png and tau_<metric>.png: the mean over seeds per order, the seeds' min-max as a band."""
    from evaluation.figures import _pyplot, _save

    plt = _pyplot()
    paths = []
    panels = [("positives", "positives found")] + [(f"tau_{m}", f"Kendall tau-b, {m}") for m in HEADLINE_METRICS
                                                     if m in result.reference]
    for name, title in panels:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for order in result.orders:
            runs = [r for r in result.runs if r.order == order]
            x = runs[0].checkpoints
            if name == "positives":
                ys = np.stack([r.found[x - 1] for r in runs])
            else:
                ys = np.stack([r.taus[name[4:]] for r in runs])
            ax.plot(x, np.nanmean(ys, axis=0), label=order)
            ax.fill_between(x, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), alpha=0.2)
        if name == "positives":
            ax.axhline(POSITIVES_TARGET * result.positives, color="grey", linestyle=":", linewidth=1)
        else:
            ax.axhline(TAU_TARGET, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(f"judgments (of {result.items})")
        ax.set_title(title)
        ax.legend(fontsize=8)
        path = out / f"{name}.png"
        _save(fig, path)
        paths.append(path)
    return paths
