"""Evaluate every system of a sample on the sparse, completed and completed-at-depth label sets (SPEC 5).

:func:`evaluate_sample` is Django-light (reads rows, no writes besides the rank cache) and returns an
:class:`EvaluationResult` of pandas tables; :func:`write_outputs` writes them as CSV/JSON (+ PNG figures);
:func:`run_evaluation` does both for an :class:`evaluation.models.EvaluationRun` row with progress.
torch is only imported when ranks must be computed (evaluation.services.ranks).
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluation.core import analyses
from evaluation.core import micro as micro_core
from evaluation.core import probe as probe_core
from evaluation.core.kendall import compare_metric_tables
from evaluation.services import metrics as m
from evaluation.services.labels import LabelSource, default_pool, label_sets
from evaluation.services.ranks import EvaluationError, can_evaluate, judged_ranks, macro_filter, union_universe
from pooling.engine.questions import known_answers
from pooling.models import Pool, Sample, System
from pooling.selectors.kg import kg_relation_categories, kg_triples
from pooling.selectors.pools import sample_questions

ProgressFn = Callable[[str, int, int], None]

#: metrics shown in the figures and used for discriminative power / data sensitivity
KEY_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


@dataclass
class EvaluationOptions:
    policy: str = "realistic"
    hits: tuple[int, ...] = (1, 3, 10)
    cutoff: int = 10
    depths: list[int] | None = None  # default 0..pool depth
    probe_alpha: float = 1.0
    probe_beta: float = 0.0
    analyses: bool = True
    n_draws: int = 50
    seed: int = 0
    device: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "hits": list(self.hits), "cutoff": self.cutoff, "depths": self.depths,
                "probe_alpha": self.probe_alpha, "probe_beta": self.probe_beta, "analyses": self.analyses,
                "n_draws": self.n_draws, "seed": self.seed}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "EvaluationOptions":
        data = dict(data or {})
        if "hits" in data:
            data["hits"] = tuple(data["hits"])
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class EvaluationResult:
    """Everything an evaluation produced (tables indexed by system name)."""

    sample: str
    systems: list[str]
    label_stats: dict[str, dict[str, Any]]
    tables: dict[str, pd.DataFrame]  # label set -> systems x metrics
    kendall: pd.DataFrame  # metric x (tau sparse vs completed)
    depth_curve: pd.DataFrame  # depth x metric (tau sparse vs completed@d)
    breakdown: pd.DataFrame  # long: label_set, system, group, metric, value, count
    probe_alpha: dict[str, pd.DataFrame]  # label set -> systems x alpha
    probe_beta: dict[str, pd.DataFrame]
    probe_heatmap: dict[str, dict[str, Any]]  # label set -> {alphas, betas, values[a][b][s] normalised}
    discriminative_power: pd.DataFrame  # long: label_set, metric, position, pvalue (+auc table)
    discriminative_auc: pd.DataFrame
    data_sensitivity: pd.DataFrame  # long: label_set, metric, fraction, size, mean_tau, std_tau
    rank_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def main_label_sets(self) -> list[str]:
        return [name for name in ("sparse", "completed") if name in self.tables]


def evaluable_systems(sample: Sample, names: list[str] | None = None) -> list[System]:
    """The systems to evaluate: the named ones (must be evaluable), else every evaluable one of the KG."""
    if names:
        from pooling.selectors.pools import systems_by_names

        systems = systems_by_names(sample.kg, names)
        bad = [s.name for s in systems if not can_evaluate(s, sample)]
        if bad:
            raise EvaluationError(f"cannot evaluate {', '.join(bad)} on {sample.name}: not ready, or an imported "
                                  f"system without a ranking on this sample")
        return systems
    return [s for s in System.objects.filter(kg=sample.kg).order_by("name") if can_evaluate(s, sample)]


def evaluate_sample(
    sample: Sample,
    *,
    systems: list[System] | None = None,
    source: LabelSource | None = None,
    pool: Pool | None = None,
    options: EvaluationOptions | None = None,
    progress: ProgressFn = _no_progress,
) -> EvaluationResult:
    """Evaluate ``systems`` (default: every evaluable one) on the label sets of ``sample`` (see the module doc).

    ``pool`` gives the depths of judged triples (default: the sample's only finished pool, if any).
    """
    started = time.perf_counter()
    options = options or EvaluationOptions()
    if options.policy not in ("realistic", "optimistic", "pessimistic"):
        raise EvaluationError(f"unknown tie policy {options.policy!r}")
    systems = systems if systems is not None else evaluable_systems(sample)
    if not systems:
        raise EvaluationError(f"no evaluable system on sample {sample.name} (train one or import a run)")
    if source is not None and pool is None:
        pool = default_pool(sample)
    kg = sample.kg
    arrays = kg_triples(kg)
    sq = sample_questions(sample)
    questions, num_entities = sq.questions, kg.num_entities
    sets = label_sets(sample, source, pool, options.depths)
    tv_filter = macro_filter(arrays, questions)
    test_answers = known_answers(questions, arrays["test"])
    biggest = sets.get("completed", sets["sparse"])
    universe = union_universe(questions, arrays["test"], biggest.triples, sets["sparse"].triples)

    rank_stats: dict[str, dict[str, int]] = {}
    ranks = {}
    for index, system in enumerate(systems):
        progress(f"ranks {system.name}", index, len(systems))
        stats: dict[str, int] = {}
        ranks[system.name] = judged_ranks(system, sample, questions, universe, tv_filter, device=options.device,
                                          progress=None, stats=stats)
        rank_stats[system.name] = stats
    progress("ranks", len(systems), len(systems))

    popularity = probe_core.TrainPopularity.from_triples(arrays["train"], num_entities, kg.num_relations)
    categories = [c for _key, c, _tph, _hpt in kg_relation_categories(kg)]
    measures = m.macro_measures(options.cutoff, options.hits)
    names = [s.name for s in systems]

    tables: dict[str, pd.DataFrame] = {}
    per_query: dict[str, dict[str, np.ndarray]] = {}  # label set -> metric -> (S, n)
    breakdown_rows: list[dict[str, Any]] = []
    probe_alpha, probe_beta, probe_heat = {}, {}, {}
    label_stats: dict[str, dict[str, Any]] = {}
    for set_index, (set_name, label_set) in enumerate(sets.items()):
        progress("metrics", set_index, len(sets))
        positives, negatives = label_set.answers(questions)
        labels = m.QuestionLabels.build(questions, positives, negatives, test_answers, tv_filter, num_entities)
        label_stats[set_name] = {"triples": len(label_set), "positives": label_set.num_positive,
                                 "negatives": label_set.num_negative, "answers": int(positives.nnz),
                                 "judged_negative_answers": int(negatives.nnz), **label_set.stats}
        rows, micro_rank_matrix, micro_candidates = [], [], None
        micro_values_per_system: list[dict[str, np.ndarray]] = []
        macro_values_per_system: list[dict[str, np.ndarray]] = []
        probe_deltas = None
        main = set_name in ("sparse", "completed")
        for name in names:
            jr = ranks[name]
            mr = m.micro_ranks(jr, labels, options.policy)
            row = m.micro_values(mr, options.hits)
            macro_pq = m.macro_per_question(jr, labels, measures, options.policy)
            row.update({column: float(values.mean()) if values.size else math.nan for column, values in macro_pq.items()})
            if probe_deltas is None:
                probe_deltas = m.probe_inputs(popularity, mr, questions)
                label_stats[set_name]["micro_rankings"] = int(mr.ranks.size)
            if mr.ranks.size:
                row["PROBE"] = probe_core.probe_score(mr.ranks, mr.num_candidates, probe_deltas.entity_delta,
                                                      probe_deltas.relation_delta, options.probe_alpha, options.probe_beta)
            else:
                row["PROBE"] = math.nan
            rows.append(row)
            micro_rank_matrix.append(mr.ranks)
            micro_candidates = mr.num_candidates if micro_candidates is None else micro_candidates
            if main:
                micro_values_per_system.append(m.micro_per_answer(mr, options.hits))
                macro_values_per_system.append(macro_pq)
                relation = questions.relation[mr.question]
                side = questions.side[mr.question].astype(np.int64)
                if mr.ranks.size:
                    counts_cs = _group_counts(relation, side, categories)
                    for group, values in micro_core.by_category_side(mr.ranks, relation, side, categories, options.hits).items():
                        for metric, value in values.items():
                            breakdown_rows.append({"label_set": set_name, "system": name, "group": group,
                                                   "metric": f"micro_{metric}", "value": value,
                                                   "count": counts_cs.get(group, 0)})
                    for group, values in micro_core.by_side(mr.ranks, side, options.hits).items():
                        for metric, value in values.items():
                            breakdown_rows.append({"label_set": set_name, "system": name, "group": f"all/{group}",
                                                   "metric": f"micro_{metric}", "value": value,
                                                   "count": int((side == (0 if group == "head" else 1)).sum())})
        table = pd.DataFrame(rows, index=pd.Index(names, name="system"))
        tables[set_name] = table
        if main and micro_rank_matrix and micro_rank_matrix[0].size:
            stacked = np.stack(micro_rank_matrix)
            ed, rd = probe_deltas.entity_delta, probe_deltas.relation_delta
            alpha_grid = probe_core.probe_alpha_grid(stacked, micro_candidates, ed, rd, probe_core.ALPHA_GRID)
            beta_grid = probe_core.probe_beta_grid(stacked, micro_candidates, ed, rd, probe_core.BETA_GRID)
            probe_alpha[set_name] = pd.DataFrame(alpha_grid.T, index=pd.Index(names, name="system"),
                                                 columns=[f"alpha={a:g}" for a in probe_core.ALPHA_GRID])
            probe_beta[set_name] = pd.DataFrame(beta_grid.T, index=pd.Index(names, name="system"),
                                                columns=[f"beta={b:g}" for b in probe_core.BETA_GRID])
            heat = probe_core.probe_heatmap(stacked, micro_candidates, ed, rd, probe_core.ALPHA_GRID,
                                            probe_core.BETA_GRID, normalise=len(names) > 1)
            probe_heat[set_name] = {"alphas": list(probe_core.ALPHA_GRID), "betas": list(probe_core.BETA_GRID),
                                    "systems": names, "values": np.asarray(heat).tolist()}
        if main:
            per_query[set_name] = {}
            if micro_values_per_system and micro_values_per_system[0]:
                for metric in micro_values_per_system[0]:
                    per_query[set_name][metric] = np.stack([v[metric] for v in micro_values_per_system])
            for metric in measures:
                per_query[set_name][metric] = np.stack([v[metric] for v in macro_values_per_system])
            if micro_rank_matrix and micro_rank_matrix[0].size:
                transformed = probe_core.rank_transform(np.stack(micro_rank_matrix), micro_candidates, options.probe_alpha)
                if options.probe_beta == 0:
                    per_query[set_name]["PROBE"] = transformed
    progress("metrics", len(sets), len(sets))

    kendall = _kendall(tables)
    depth_curve = _depth_curve(tables)
    breakdown = pd.DataFrame(breakdown_rows, columns=["label_set", "system", "group", "metric", "value", "count"])
    dp, dp_auc, ds = _analyses(per_query, options) if options.analyses and len(names) >= 2 else (
        _empty_dp(), _empty_auc(), _empty_ds())
    return EvaluationResult(
        sample=f"{kg.name}/{sample.name}", systems=names, label_stats=label_stats, tables=tables, kendall=kendall,
        depth_curve=depth_curve, breakdown=breakdown, probe_alpha=probe_alpha, probe_beta=probe_beta,
        probe_heatmap=probe_heat, discriminative_power=dp, discriminative_auc=dp_auc, data_sensitivity=ds,
        rank_stats=rank_stats, seconds=time.perf_counter() - started,
    )


def _group_counts(relation: np.ndarray, side: np.ndarray, categories: list[str]) -> dict[str, int]:
    labels = np.array(categories, dtype=object)[relation]
    counts: dict[str, int] = {}
    for category, s in zip(labels.tolist(), side.tolist()):
        key = f"{category}/{'head' if s == 0 else 'tail'}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _kendall(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    if "completed" not in tables or len(tables["sparse"]) < 2:
        return pd.DataFrame(columns=["tau"], index=pd.Index([], name="metric"))
    tau = compare_metric_tables(tables["sparse"], tables["completed"])
    return tau.to_frame("tau")


def _depth_curve(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    depth_names = sorted((int(name.split("@")[1]), name) for name in tables if name.startswith("completed@"))
    sparse = tables["sparse"]
    if not depth_names or len(sparse) < 2:
        return pd.DataFrame(index=pd.Index([], name="depth"))
    metrics = list(sparse.columns)
    stacked = np.stack([tables[name][metrics].to_numpy(dtype=np.float64) for _d, name in depth_names])
    curve = analyses.pooling_depth_curve(sparse[metrics].to_numpy(dtype=np.float64), stacked,
                                         [d for d, _n in depth_names])
    return pd.DataFrame(curve, index=pd.Index([d for d, _n in depth_names], name="depth"), columns=metrics)


def _empty_dp() -> pd.DataFrame:
    return pd.DataFrame(columns=["label_set", "metric", "position", "pvalue"])


def _empty_auc() -> pd.DataFrame:
    return pd.DataFrame(columns=["label_set", "metric", "auc", "significant_fraction"])


def _empty_ds() -> pd.DataFrame:
    return pd.DataFrame(columns=["label_set", "metric", "fraction", "size", "mean_tau", "std_tau"])


def _analyses(per_query: dict[str, dict[str, np.ndarray]], options: EvaluationOptions
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    dp_rows, auc_rows, ds_rows = [], [], []
    for set_name, values in per_query.items():
        for metric in KEY_METRICS:
            matrix = values.get(metric)
            if matrix is None or matrix.shape[1] < 2:
                continue
            power = analyses.discriminative_power(matrix)
            for position, p in enumerate(np.atleast_1d(power.sorted_pvalues).tolist()):
                dp_rows.append({"label_set": set_name, "metric": metric, "position": position, "pvalue": p})
            auc_rows.append({"label_set": set_name, "metric": metric, "auc": float(power.auc),
                             "significant_fraction": float(power.significant_fraction)})
            if np.all(np.isfinite(matrix)):
                sens = analyses.data_sensitivity(matrix, n_draws=options.n_draws, seed=options.seed)
                for fraction, size, mean, std in zip(sens.fractions.tolist(), sens.subset_sizes.tolist(),
                                                     np.atleast_1d(sens.mean_tau).tolist(), np.atleast_1d(sens.std_tau).tolist()):
                    ds_rows.append({"label_set": set_name, "metric": metric, "fraction": fraction, "size": size,
                                    "mean_tau": mean, "std_tau": std})
    return (pd.DataFrame(dp_rows, columns=_empty_dp().columns), pd.DataFrame(auc_rows, columns=_empty_auc().columns),
            pd.DataFrame(ds_rows, columns=_empty_ds().columns))


# ------------------------------------------------------------------------------------ outputs
OUTPUT_FILES = {
    "summary.json": "everything below as one JSON document",
    "metrics.csv": "label set, system and one column per metric (sparse, completed, completed@d)",
    "kendall.csv": "Kendall's tau-b between the sparse and completed orderings, per metric",
    "depth_curve.csv": "tau-b between sparse and completed@d, per depth and metric",
    "breakdown.csv": "micro metrics per relation category x side (and per side)",
    "probe.csv": "PROBE alpha grid (beta=0) and beta grid (alpha=1) per label set and system",
    "probe_heatmap.csv": "alpha x beta PROBE, min-max normalised per cell across systems",
    "discriminative_power.csv": "sorted p-values of the paired t-test over all system pairs",
    "data_sensitivity.csv": "mean tau-b on random question subsets vs all questions",
}
FIGURE_FILES = {
    "depth_curve.png": "tau vs pooling depth per metric",
    "probe_heatmap.png": "PROBE alpha x beta heatmap (completed labels)",
    "discriminative_power.png": "sorted p-values per metric",
    "data_sensitivity.png": "data-sensitivity curves per metric",
}


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.floating,)):
        return _clean(float(value))
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _records(frame: pd.DataFrame, index_name: str | None = None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    data = frame.reset_index() if index_name else frame
    return [_clean(row) for row in data.to_dict(orient="records")]


def result_to_json(result: EvaluationResult) -> dict[str, Any]:
    return _clean({
        "sample": result.sample,
        "systems": result.systems,
        "seconds": round(result.seconds, 3),
        "label_sets": result.label_stats,
        "rank_stats": result.rank_stats,
        "tables": {name: _records(table, "system") for name, table in result.tables.items()},
        "metrics": list(next(iter(result.tables.values())).columns) if result.tables else [],
        "kendall": _records(result.kendall, "metric"),
        "depth_curve": _records(result.depth_curve, "depth"),
        "breakdown": _records(result.breakdown),
        "probe_alpha": {name: _records(frame, "system") for name, frame in result.probe_alpha.items()},
        "probe_beta": {name: _records(frame, "system") for name, frame in result.probe_beta.items()},
        "probe_heatmap": result.probe_heatmap,
        "discriminative_auc": _records(result.discriminative_auc),
        "discriminative_power": _records(result.discriminative_power),
        "data_sensitivity": _records(result.data_sensitivity),
    })


def metrics_long_table(result: EvaluationResult) -> pd.DataFrame:
    frames = [table.reset_index().assign(label_set=name) for name, table in result.tables.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame[["label_set", "system"] + [c for c in frame.columns if c not in ("label_set", "system")]]


def write_outputs(result: EvaluationResult, out_dir: Path | str, *, figures: bool = True) -> list[str]:
    """Write the CSV/JSON files (and PNG figures) into ``out_dir``; returns the file names written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def csv(name: str, frame: pd.DataFrame, index: bool = False) -> None:
        frame.to_csv(out / name, index=index, float_format="%.6g")
        written.append(name)

    csv("metrics.csv", metrics_long_table(result))
    csv("kendall.csv", result.kendall, index=True)
    csv("depth_curve.csv", result.depth_curve, index=True)
    csv("breakdown.csv", result.breakdown)
    probe_rows = []
    for kind, tables in (("alpha", result.probe_alpha), ("beta", result.probe_beta)):
        for name, frame in tables.items():
            for system, row in frame.iterrows():
                for column, value in row.items():
                    probe_rows.append({"label_set": name, "grid": kind, "system": system,
                                       "parameter": float(str(column).split("=")[1]), "value": value})
    csv("probe.csv", pd.DataFrame(probe_rows, columns=["label_set", "grid", "system", "parameter", "value"]))
    heat_rows = []
    for name, heat in result.probe_heatmap.items():
        values = np.asarray(heat["values"])
        for i, alpha in enumerate(heat["alphas"]):
            for j, beta in enumerate(heat["betas"]):
                for s, system in enumerate(heat["systems"]):
                    heat_rows.append({"label_set": name, "alpha": alpha, "beta": beta, "system": system,
                                      "value": float(values[i, j, s]) if values.ndim == 3 else float(values[i, j])})
    csv("probe_heatmap.csv", pd.DataFrame(heat_rows, columns=["label_set", "alpha", "beta", "system", "value"]))
    csv("discriminative_power.csv", result.discriminative_power)
    csv("data_sensitivity.csv", result.data_sensitivity)
    (out / "summary.json").write_text(json.dumps(result_to_json(result), indent=1), encoding="utf-8")
    written.append("summary.json")
    if figures:
        from evaluation import figures as fig

        written += fig.write_figures(result, out)
    return written


def format_tables(result: EvaluationResult) -> str:
    """Plain-text tables for the command line."""
    lines = [f"Evaluation of {len(result.systems)} systems on {result.sample} ({result.seconds:.1f} s)"]
    for name, stats in result.label_stats.items():
        if name.startswith("completed@"):
            continue
        lines.append(f"  {name}: {stats['positives']} positive / {stats['negatives']} negative triples, "
                     f"{stats.get('micro_rankings', 0)} micro rankings")
    with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4f}".format):
        for name in result.main_label_sets():
            lines += ["", f"== {name} labels ==", result.tables[name].to_string()]
        if not result.kendall.empty:
            lines += ["", "== Kendall's tau-b, sparse vs completed ==", result.kendall.T.to_string()]
        if not result.depth_curve.empty:
            columns = [c for c in KEY_METRICS if c in result.depth_curve.columns]
            lines += ["", "== tau-b vs pooling depth ==", result.depth_curve[columns].to_string()]
        if not result.breakdown.empty:
            sub = result.breakdown[result.breakdown.metric == "micro_MRR"]
            pivot = sub.pivot_table(index=["label_set", "group"], columns="system", values="value")
            lines += ["", "== micro MRR per relation category x side ==", pivot.to_string()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ runs (database)
def result_dir(run: Any) -> str:
    return f"evaluation/runs/{run.pk}"


def create_run(sample: Sample, *, systems: list[System] | None = None, labels_file: str = "",
               pool: Pool | None = None, options: EvaluationOptions | None = None, name: str = "") -> Any:
    """A pending EvaluationRun row (compute it with :func:`run_evaluation` or :func:`start_evaluation`)."""
    from evaluation.models import EvaluationRun

    systems = systems if systems is not None else evaluable_systems(sample)
    if labels_file and not Path(labels_file).is_file():
        raise EvaluationError(f"labels file {labels_file} does not exist")
    run = EvaluationRun.objects.create(
        sample=sample, name=name or f"{sample.name}", labels_file=str(labels_file or ""), pool=pool,
        options=(options or EvaluationOptions()).to_dict(),
    )
    run.systems.set(systems)
    return run


def start_evaluation(run: Any) -> None:
    """Compute the run on a Celery worker once the current transaction commits."""
    from evaluation.tasks import run_evaluation as task

    run_id = run.pk
    from django.db import transaction

    transaction.on_commit(lambda: task.delay(run_id))


def run_evaluation(run: Any, *, figures: bool = True) -> Any:
    """Compute an EvaluationRun: evaluate, write its files under STORAGE_DIR, store the summary. Idempotent."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun
    from evaluation.services.labels import JudgmentsFile

    run.refresh_from_db()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING, error="", stage="start",
                                                   progress_done=0, progress_total=0, started_at=timezone.now())

    def progress(stage: str, done: int, total: int) -> None:
        EvaluationRun.objects.filter(pk=run.pk).update(stage=stage[:100], progress_done=done, progress_total=total)

    try:
        source = JudgmentsFile(Path(run.labels_file)) if run.labels_file else None
        result = evaluate_sample(run.sample, systems=list(run.systems.order_by("name")), source=source, pool=run.pool,
                                 options=EvaluationOptions.from_dict(run.options), progress=progress)
        store_result(run, result, figures=figures)
    except Exception as exc:
        EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.FAILED,
                                                       error=f"{type(exc).__name__}: {exc}"[:10000],
                                                       finished_at=timezone.now())
        raise
    run.refresh_from_db()
    return run


def store_result(run: Any, result: EvaluationResult, *, figures: bool = True) -> Any:
    """Write ``result``'s files under STORAGE_DIR for ``run`` and mark it done."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun
    from pooling.storage import storage_path

    relative = result_dir(run)
    files = write_outputs(result, storage_path(relative), figures=figures)
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=EvaluationRun.Status.DONE, result_dir=relative, files=files, seconds=result.seconds,
        summary={"kendall": _records(result.kendall, "metric"), "systems": result.systems,
                 "label_sets": _clean(result.label_stats)},
        stage="done", error="", progress_done=1, progress_total=1, finished_at=timezone.now(),
    )
    run.refresh_from_db()
    return run
