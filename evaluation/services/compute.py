"""Evaluate every system of a sample on the sparse, completed and completed-at-depth label sets (SPEC 5).

:func:`evaluate_sample` reads rows (no writes besides the rank cache) and returns an
:class:`~evaluation.services.result.EvaluationResult`. Its stages, one module each:

1. ``inputs``: label sets (``labels``), the evaluated questions (the sample's + the completion questions, so the
   completed micro metrics rank both sides of every positive triple) and the judged ranks of every system
   (``ranks``, from ``scores``: trained, score matrix and run all ranked by the same engine and filter);
2. ``label_metrics``: per label set, the metric table, breakdowns, PROBE grids and coverage (the metric families
   themselves are in ``metrics``);
3. ``comparisons``: Kendall's tau-b, the pooling-depth curve, the reweighted completed labels, discriminative power,
   data sensitivity and the open-world simulation;
4. ``protocols`` (when ``options.protocols`` asks): triple classification, entity-pair ranking and property
   prediction on the sparse and completed labels, and tau-b between the protocols' system orderings.

torch is only imported when ranks must be computed.
"""
from __future__ import annotations

import time

import pandas as pd

from evaluation.core import micro as micro_core
from evaluation.core import probe as probe_core
from evaluation.services import comparisons
from evaluation.services import metrics as m
from evaluation.services.errors import EvaluationError
from evaluation.services.inputs import ProgressFn, _no_progress, evaluable_systems, evaluation_inputs, score_systems
from evaluation.services.label_metrics import MetricContext, label_set_metrics
from evaluation.services.labels import LabelSource
from evaluation.services.protocols import check_protocol_options, compute_protocols
from evaluation.services.result import (
    EvaluationOptions, EvaluationResult, empty_auc, empty_coverage, empty_dp, empty_ds, empty_open_world,
    empty_relations,
)
from pooling.models import Pool, Sample, System
from pooling.selectors.kg import kg_relation_categories, kg_relation_keys


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

    ``pool`` gives the depths of judged triples (default: the source's pool -- a campaign's --, else the sample's
    only finished pool, if any).
    """
    started = time.perf_counter()
    timings: dict[str, float] = {}
    clock = [started]

    def lap(stage: str) -> None:
        now = time.perf_counter()
        timings[stage] = timings.get(stage, 0.0) + now - clock[0]
        clock[0] = now

    options = options or EvaluationOptions()
    if options.policy not in ("realistic", "optimistic", "pessimistic"):
        raise EvaluationError(f"unknown tie policy {options.policy!r}")
    if options.dp_test not in ("t", "bootstrap"):
        raise EvaluationError(f"unknown discriminative-power test {options.dp_test!r} (t or bootstrap)")
    check_protocol_options(options)
    systems = systems if systems is not None else evaluable_systems(sample)
    if not systems:
        raise EvaluationError(f"no evaluable system on sample {sample.name} (train one or import a run)")
    kg = sample.kg
    progress("labels", 0, 1)
    inputs = evaluation_inputs(sample, source, pool, options.depths)
    lap("labels")
    ranks, rank_stats = score_systems(inputs, systems, device=options.device, progress=progress)
    lap("ranks")

    relation_keys = kg_relation_keys(kg)
    domain_codes, _domain_names = micro_core.group_codes(relation_keys)
    ctx = MetricContext(
        questions=inputs.asked.questions, qids=inputs.asked.qids, num_sampled=inputs.asked.num_sampled,
        num_entities=kg.num_entities, test_answers=inputs.test_answers, tv_filter=inputs.tv_filter,
        popularity=probe_core.TrainPopularity.from_triples(inputs.arrays["train"], kg.num_entities, kg.num_relations),
        categories=[c for _key, c, _tph, _hpt in kg_relation_categories(kg)], relation_keys=relation_keys,
        domain_codes=domain_codes, measures=m.macro_measures(options.cutoff, options.hits),
    )
    names = [s.name for s in systems]
    per_set = {}
    for index, (set_name, label_set) in enumerate(inputs.sets.items()):
        progress("metrics", index, len(inputs.sets))
        per_set[set_name] = label_set_metrics(set_name, label_set, ctx, ranks, options,
                                              main=set_name in ("sparse", "completed"))
    progress("metrics", len(inputs.sets), len(inputs.sets))
    main = {name: per_set[name] for name in ("sparse", "completed") if name in per_set}
    tables = {name: metrics.table for name, metrics in per_set.items()}
    main_micro = {name: metrics.micro for name, metrics in main.items()}
    reweighted, reweighted_kendall = comparisons.reweighted(tables, inputs.sets, main_micro, ctx.questions,
                                                            max(kg.num_relations, 1), names, options)
    breakdown = pd.DataFrame([row for metrics in main.values() for row in metrics.breakdown_rows],
                             columns=["label_set", "system", "group", "metric", "value", "count"])
    relation_rows = [row for metrics in main.values() for row in metrics.relation_rows]
    coverage_rows = [row for metrics in per_set.values() for row in metrics.coverage_rows]
    lap("metrics")
    run_analyses = options.analyses and len(names) >= 2
    dp, dp_auc, ds = empty_dp(), empty_auc(), empty_ds()
    if run_analyses:
        progress("analyses", 0, 1)
        dp, dp_auc, ds = comparisons.significance({name: metrics.per_query for name, metrics in main.items()}, options)
    lap("analyses")
    open_world = empty_open_world()
    if run_analyses and options.open_world and "completed" in main_micro:
        progress("open-world simulation", 0, 1)
        open_world = comparisons.open_world(main_micro["completed"], ranks, names, options)
    lap("open_world")
    protocols = None
    if options.protocols:
        progress("protocols", 0, 1)
        protocols = compute_protocols(sample, systems, inputs.sets, inputs.arrays, relation_keys, ctx.categories,
                                      tables, options)
    lap("protocols")
    return EvaluationResult(
        sample=f"{kg.name}/{sample.name}", systems=names,
        label_stats={name: metrics.stats for name, metrics in per_set.items()}, tables=tables,
        kendall=comparisons.kendall(tables), depth_curve=comparisons.depth_curve(tables), breakdown=breakdown,
        probe_alpha={name: x.probe_alpha for name, x in main.items() if x.probe_alpha is not None},
        probe_beta={name: x.probe_beta for name, x in main.items() if x.probe_beta is not None},
        probe_heatmap={name: x.probe_heatmap for name, x in main.items() if x.probe_heatmap is not None},
        discriminative_power=dp, discriminative_auc=dp_auc, data_sensitivity=ds,
        rank_stats=rank_stats, seconds=time.perf_counter() - started,
        relations=pd.DataFrame(relation_rows, columns=empty_relations().columns.tolist() + [
            f"micro_{n}" for n in micro_core.metric_names(options.hits)]) if relation_rows else empty_relations(),
        averages=pd.DataFrame([row for x in main.values() for row in x.average_rows],
                              columns=["label_set", "system", "average", "metric", "value"]),
        reweighted=reweighted, reweighted_kendall=reweighted_kendall, open_world=open_world,
        coverage=pd.DataFrame(coverage_rows, columns=empty_coverage().columns) if coverage_rows else empty_coverage(),
        timings=timings, options=options.to_dict(), protocols=protocols,
    )
