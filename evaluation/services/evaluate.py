"""Evaluate every system of a sample on the sparse, completed and completed-at-depth label sets (SPEC 5).

:func:`evaluate_sample` is Django-light (reads rows, no writes besides the rank cache) and returns an
:class:`EvaluationResult` of pandas tables; :func:`write_outputs` writes them as CSV/JSON (+ PNG figures);
:func:`run_evaluation` does both for an :class:`evaluation.models.EvaluationRun` row with progress.
torch is only imported when ranks must be computed (evaluation.services.ranks).

Besides the micro / macro / PROBE tables (with p-MRR and log-MRR next to PROBE) a result holds: micro metrics per
relation, averaged over relations and over Freebase domains, micro and macro per relation category x side, the
completed labels reweighted with the sparse relation distribution (and its tau-b vs sparse), discriminative power
(paired t-test or Sakai's bootstrap), data sensitivity and the open-world simulation on the completed labels.
A run is computed in two stages (:func:`score_run` fills the rank cache -- torch, GPU queue --, then
:func:`run_evaluation`), and a re-run with unchanged inputs recomputes nothing.
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
from pooling.selectors.kg import kg_relation_categories, kg_relation_keys, kg_triples
from pooling.selectors.pools import sample_questions

ProgressFn = Callable[[str, int, int], None]

#: metrics shown in the figures and used for discriminative power / data sensitivity
KEY_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")
#: p-MRR exponents shown next to PROBE (p = 1 is micro MRR), SPEC 5.4
P_MRR = ((1, 4), (1, 3), (1, 2), (2, 3), (3, 4))
#: open-world simulation: metrics recomputed after dropping answers
OPEN_WORLD_METRICS = ("micro_MRR", "micro_Hits@10", "micro_MR", "pMRR_1/2", "logMRR", "macro_MRR", "macro_Hits@10")


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
    dp_test: str = "t"  # discriminative power: "t" (paired t-test) or "bootstrap" (Sakai's paired bootstrap)
    n_bootstrap: int = 1000
    open_world: bool = True  # open-world simulation on the completed labels (with analyses)
    open_world_fractions: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    open_world_repeats: int = 10

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "hits": list(self.hits), "cutoff": self.cutoff, "depths": self.depths,
                "probe_alpha": self.probe_alpha, "probe_beta": self.probe_beta, "analyses": self.analyses,
                "n_draws": self.n_draws, "seed": self.seed, "dp_test": self.dp_test, "n_bootstrap": self.n_bootstrap,
                "open_world": self.open_world, "open_world_fractions": list(self.open_world_fractions),
                "open_world_repeats": self.open_world_repeats}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "EvaluationOptions":
        data = dict(data or {})
        for key in ("hits", "open_world_fractions"):
            if key in data:
                data[key] = tuple(data[key])
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
    #: micro metrics per relation, wide: label_set, system, relation, domain, category, count, micro_* columns
    relations: pd.DataFrame = field(default_factory=lambda: _empty_relations())
    #: long: label_set, system, average ("relations" | "domains"), metric, value (unweighted means of groups)
    averages: pd.DataFrame = field(default_factory=lambda: _empty_averages())
    #: systems x micro metrics on the completed labels reweighted with the sparse relation distribution
    reweighted: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: metric x (tau sparse vs completed, tau sparse vs reweighted, tau completed vs reweighted)
    reweighted_kendall: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: long: metric, drop_fraction, mean_tau, std_tau, repeats (open-world simulation on the completed labels)
    open_world: pd.DataFrame = field(default_factory=lambda: _empty_open_world())
    timings: dict[str, float] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

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


@dataclass
class EvaluationInputs:
    """What every stage of an evaluation shares: the label sets and the universe of (question, entity) to rank."""

    sample: Sample
    pool: Pool | None
    sets: dict[str, Any]
    arrays: dict[str, np.ndarray]
    sq: Any
    tv_filter: Any
    test_answers: Any
    universe: Any

    def digest(self) -> str:
        """Fingerprint of the labels and pool (to skip a re-run whose inputs did not change)."""
        import hashlib

        digest = hashlib.sha1()
        for name in sorted(self.sets):
            digest.update(f"{name}:{self.sets[name].digest()};".encode())
        digest.update(f"pool:{self.pool.pk if self.pool is not None else ''}".encode())
        return digest.hexdigest()[:16]


def evaluation_inputs(sample: Sample, source: LabelSource | None = None, pool: Pool | None = None,
                      depths: list[int] | None = None) -> EvaluationInputs:
    """Label sets of ``sample`` from ``source`` and the universe to rank. ``pool`` defaults to the source's pool
    (a campaign's) or else the sample's only finished pool."""
    if source is not None and pool is None:
        pool = getattr(source, "pool", None) or default_pool(sample)
    arrays = kg_triples(sample.kg)
    sq = sample_questions(sample)
    sets = label_sets(sample, source, pool, depths)
    tv_filter = macro_filter(arrays, sq.questions)
    test_answers = known_answers(sq.questions, arrays["test"])
    biggest = sets.get("completed", sets["sparse"])
    universe = union_universe(sq.questions, arrays["test"], biggest.triples, sets["sparse"].triples)
    return EvaluationInputs(sample, pool, sets, arrays, sq, tv_filter, test_answers, universe)


def score_systems(inputs: EvaluationInputs, systems: list[System], *, device: str | None = None,
                  progress: ProgressFn = _no_progress) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """Judged ranks of every system on the universe (rank cache: only missing pairs are scored)."""
    rank_stats: dict[str, dict[str, int]] = {}
    ranks = {}
    for index, system in enumerate(systems):
        progress(f"ranks {system.name}", index, len(systems))
        stats: dict[str, int] = {}
        ranks[system.name] = judged_ranks(system, inputs.sample, inputs.sq.questions, inputs.universe,
                                          inputs.tv_filter, device=device, progress=None, stats=stats)
        rank_stats[system.name] = stats
    progress("ranks", len(systems), len(systems))
    return ranks, rank_stats


def rank_curve_values(ranks: np.ndarray) -> dict[str, float]:
    """p-MRR for p in :data:`P_MRR` and log-MRR of micro ranks (SPEC 5.4), NaN without ranks."""
    values: dict[str, float] = {}
    for num, den in P_MRR:
        values[f"pMRR_{num}/{den}"] = float(probe_core.p_mrr(ranks, num / den)) if ranks.size else math.nan
    values["logMRR"] = float(probe_core.log_mrr(ranks)) if ranks.size else math.nan
    return values


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
    systems = systems if systems is not None else evaluable_systems(sample)
    if not systems:
        raise EvaluationError(f"no evaluable system on sample {sample.name} (train one or import a run)")
    kg = sample.kg
    progress("labels", 0, 1)
    inputs = evaluation_inputs(sample, source, pool, options.depths)
    sets, arrays, sq = inputs.sets, inputs.arrays, inputs.sq
    questions, num_entities = sq.questions, kg.num_entities
    tv_filter, test_answers = inputs.tv_filter, inputs.test_answers
    lap("labels")
    ranks, rank_stats = score_systems(inputs, systems, device=options.device, progress=progress)
    lap("ranks")

    popularity = probe_core.TrainPopularity.from_triples(arrays["train"], num_entities, kg.num_relations)
    categories = [c for _key, c, _tph, _hpt in kg_relation_categories(kg)]
    relation_keys = kg_relation_keys(kg)
    domain_codes, domain_names = micro_core.group_codes(relation_keys)
    num_relations = max(kg.num_relations, 1)
    measures = m.macro_measures(options.cutoff, options.hits)
    names = [s.name for s in systems]
    question_category = np.array(categories, dtype=object)[questions.relation] if len(questions) else np.zeros(0, object)
    question_side = questions.side.astype(np.int64)

    tables: dict[str, pd.DataFrame] = {}
    per_query: dict[str, dict[str, np.ndarray]] = {}  # label set -> metric -> (S, n)
    breakdown_rows: list[dict[str, Any]] = []
    relation_rows: list[dict[str, Any]] = []
    average_rows: list[dict[str, Any]] = []
    main_micro: dict[str, dict[str, m.MicroRanks]] = {}
    main_labels: dict[str, m.QuestionLabels] = {}
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
        if main:
            main_micro[set_name] = {}
            main_labels[set_name] = labels
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
            row.update(rank_curve_values(mr.ranks))
            rows.append(row)
            micro_rank_matrix.append(mr.ranks)
            micro_candidates = mr.num_candidates if micro_candidates is None else micro_candidates
            if main:
                main_micro[set_name][name] = mr
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
                    relation_rows += _relation_rows(set_name, name, mr.ranks, relation, relation_keys, categories,
                                                    options.hits)
                    for average, values in (
                            ("relations", micro_core.macro_over_relations(mr.ranks, relation, options.hits)),
                            ("domains", micro_core.macro_over_groups(mr.ranks, relation, domain_codes, options.hits))):
                        for metric, value in values.items():
                            average_rows.append({"label_set": set_name, "system": name, "average": average,
                                                 "metric": f"micro_{metric}", "value": value})
                breakdown_rows += _macro_category_rows(set_name, name, macro_pq, question_category, question_side)
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
    reweighted, reweighted_kendall = _reweighted(tables, sets, main_micro, questions, num_relations, names, options)
    breakdown = pd.DataFrame(breakdown_rows, columns=["label_set", "system", "group", "metric", "value", "count"])
    lap("metrics")
    run_analyses = options.analyses and len(names) >= 2
    if run_analyses:
        progress("analyses", 0, 1)
        dp, dp_auc, ds = _analyses(per_query, options)
    else:
        dp, dp_auc, ds = _empty_dp(), _empty_auc(), _empty_ds()
    lap("analyses")
    open_world = _empty_open_world()
    if run_analyses and options.open_world and "completed" in main_micro:
        progress("open-world simulation", 0, 1)
        open_world = _open_world(main_micro["completed"], main_labels["completed"], ranks, names, options)
    lap("open_world")
    return EvaluationResult(
        sample=f"{kg.name}/{sample.name}", systems=names, label_stats=label_stats, tables=tables, kendall=kendall,
        depth_curve=depth_curve, breakdown=breakdown, probe_alpha=probe_alpha, probe_beta=probe_beta,
        probe_heatmap=probe_heat, discriminative_power=dp, discriminative_auc=dp_auc, data_sensitivity=ds,
        rank_stats=rank_stats, seconds=time.perf_counter() - started,
        relations=pd.DataFrame(relation_rows, columns=_empty_relations().columns.tolist() + [
            f"micro_{n}" for n in micro_core.metric_names(options.hits)]) if relation_rows else _empty_relations(),
        averages=pd.DataFrame(average_rows, columns=_empty_averages().columns),
        reweighted=reweighted, reweighted_kendall=reweighted_kendall, open_world=open_world, timings=timings,
        options=options.to_dict(),
    )


def _empty_relations() -> pd.DataFrame:
    return pd.DataFrame(columns=["label_set", "system", "relation", "domain", "category", "count"])


def _empty_averages() -> pd.DataFrame:
    return pd.DataFrame(columns=["label_set", "system", "average", "metric", "value"])


def _empty_open_world() -> pd.DataFrame:
    return pd.DataFrame(columns=["metric", "drop_fraction", "mean_tau", "std_tau", "repeats"])


def _relation_rows(set_name: str, system: str, ranks: np.ndarray, relation: np.ndarray, relation_keys: list[str],
                   categories: list[str], hits: tuple[int, ...]) -> list[dict[str, Any]]:
    means, counts = micro_core.grouped_metrics(ranks, relation, len(relation_keys), hits)
    rows = []
    for r in np.flatnonzero(counts).tolist():
        row = {"label_set": set_name, "system": system, "relation": relation_keys[r],
               "domain": micro_core.freebase_domain(relation_keys[r]), "category": categories[r],
               "count": int(counts[r])}
        row.update({f"micro_{metric}": float(values[r]) for metric, values in means.items()})
        rows.append(row)
    return rows


def _macro_category_rows(set_name: str, system: str, macro_pq: dict[str, np.ndarray], question_category: np.ndarray,
                         question_side: np.ndarray) -> list[dict[str, Any]]:
    """Macro (question-wise) means per relation category x side and per side."""
    rows = []
    if question_side.size == 0:
        return rows
    groups = [(f"{c}/{s}", (question_category == c) & (question_side == k))
              for c in micro_core.CATEGORIES for k, s in enumerate(micro_core.SIDE_NAMES)]
    groups += [(f"all/{s}", question_side == k) for k, s in enumerate(micro_core.SIDE_NAMES)]
    for group, mask in groups:
        count = int(mask.sum())
        if not count:
            continue
        for metric, values in macro_pq.items():
            if values.size == mask.size:
                rows.append({"label_set": set_name, "system": system, "group": group, "metric": metric,
                             "value": float(values[mask].mean()), "count": count})
    return rows


def _reweighted(tables: dict[str, pd.DataFrame], sets: dict[str, Any], main_micro: dict[str, dict[str, Any]],
                questions: Any, num_relations: int, names: list[str], options: EvaluationOptions
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Micro on the completed labels with the sparse set's relation distribution as weights (SPEC 5.2), and the
    tau-b of its ordering against the sparse (and completed) ordering. A relation of the sparse set left without
    any completed ranking (all its sampled triples judged N) gets weight 0; the rest is renormalised."""
    if "completed" not in main_micro or not main_micro["completed"]:
        return pd.DataFrame(), pd.DataFrame()
    weights = micro_core.relation_distribution(sets["sparse"].triples[:, 1], num_relations)
    rows = []
    for name in names:
        mr = main_micro["completed"][name]
        relation = questions.relation[mr.question]
        present = np.bincount(relation, minlength=num_relations) > 0
        usable = np.where(present[:len(weights)], weights, 0.0)
        if mr.ranks.size == 0 or usable.sum() <= 0:
            rows.append({f"micro_{n}": math.nan for n in micro_core.metric_names(options.hits)})
            continue
        values = micro_core.reweighted(mr.ranks, relation, usable, options.hits)
        rows.append({f"micro_{metric}": value for metric, value in values.items()})
    table = pd.DataFrame(rows, index=pd.Index(names, name="system"))
    if len(names) < 2:
        return table, pd.DataFrame()
    metrics = list(table.columns)
    sparse, completed = tables["sparse"][metrics], tables["completed"][metrics]
    kendall = pd.DataFrame({
        "tau_sparse_vs_completed": compare_metric_tables(sparse, completed),
        "tau_sparse_vs_reweighted": compare_metric_tables(sparse, table),
        "tau_completed_vs_reweighted": compare_metric_tables(completed, table),
    })
    kendall.index.name = "metric"
    return table, kendall


def _open_world(micro: dict[str, Any], labels: m.QuestionLabels, ranks: dict[str, Any], names: list[str],
                options: EvaluationOptions) -> pd.DataFrame:
    """Open-world simulation (SPEC 5.5) on the completed labels: drop a share of the true answers, recompute.

    Micro metrics: a dropped answer is no longer filtered, so each kept answer it outscores moves down one rank
    (half a rank on a tie; ``analyses.AnswerRankShift``). Macro MRR / Hits@10: a question's min rank over its kept
    answers (macro ranks filter train + valid only, so dropping does not move them); questions left without an
    answer drop out. tau-b is against the closed-world (nothing dropped) ordering; mean and std over the repeats.
    """
    first = micro[names[0]]
    if first.ranks.size < 2:
        return _empty_open_world()
    micro_ranks = np.stack([micro[name].ranks for name in names])
    scores = np.stack([ranks[name].score[ranks[name].lookup(first.question, first.answer)] for name in names])
    macro_ranks = []
    for name in names:
        jr = ranks[name]
        index = jr.lookup(first.question, first.answer)
        macro_ranks.append(np.where(jr.retrieved(index), jr.ranks(index, options.policy), np.inf))
    macro_ranks = np.stack(macro_ranks)
    shift = analyses.AnswerRankShift(micro_ranks, scores, first.question)
    question = first.question
    pmrr = lambda r: np.power(r, -0.5)  # noqa: E731
    logmrr = lambda r: np.log(2.0) / np.log1p(r)  # noqa: E731

    def metric_fn(kept: np.ndarray) -> np.ndarray:
        shifted = shift.shifted_ranks(kept)[:, kept]
        kept_q = question[kept]
        starts = np.flatnonzero(np.r_[True, kept_q[1:] != kept_q[:-1]])
        best = np.minimum.reduceat(macro_ranks[:, kept], starts, axis=1)
        columns = {"micro_MRR": (1.0 / shifted).mean(1), "micro_Hits@10": (shifted <= 10).mean(1),
                   "micro_MR": shifted.mean(1), "pMRR_1/2": pmrr(shifted).mean(1), "logMRR": logmrr(shifted).mean(1),
                   "macro_MRR": (1.0 / best).mean(1), "macro_Hits@10": (best <= 10).mean(1)}
        return np.stack([columns[c] for c in OPEN_WORLD_METRICS], axis=1)

    fractions = [f for f in options.open_world_fractions if 0 <= f < 1]
    result = analyses.open_world_simulation(metric_fn, int(first.ranks.size), fractions,
                                            n_repeats=options.open_world_repeats, seed=options.seed)
    with analyses._ignore_nan_warnings():
        std = np.nanstd(result.taus, axis=1)
    rows = []
    for i, fraction in enumerate(result.drop_fractions.tolist()):
        for j, metric in enumerate(OPEN_WORLD_METRICS):
            rows.append({"metric": metric, "drop_fraction": fraction, "mean_tau": float(result.mean_tau[i, j]),
                         "std_tau": float(std[i, j]), "repeats": options.open_world_repeats})
    return pd.DataFrame(rows, columns=_empty_open_world().columns)


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
    return pd.DataFrame(columns=["label_set", "metric", "auc", "significant_fraction", "test"])


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
            power = analyses.discriminative_power(matrix, test=options.dp_test, n_bootstrap=options.n_bootstrap,
                                                  seed=options.seed)
            for position, p in enumerate(np.atleast_1d(power.sorted_pvalues).tolist()):
                dp_rows.append({"label_set": set_name, "metric": metric, "position": position, "pvalue": p})
            auc_rows.append({"label_set": set_name, "metric": metric, "auc": float(power.auc),
                             "significant_fraction": float(power.significant_fraction), "test": options.dp_test})
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
    "breakdown.csv": "micro and macro metrics per relation category x side (and per side)",
    "relations.csv": "micro metrics per relation (with its Freebase domain and category)",
    "averages.csv": "micro metrics averaged over relations and over domains (each group counts equally)",
    "reweighted.csv": "micro metrics on the completed labels reweighted with the sparse relation distribution",
    "reweighted_kendall.csv": "tau-b of the reweighted ordering vs the sparse and the completed orderings",
    "open_world.csv": "open-world simulation: mean/std tau-b vs the closed-world ordering per share of dropped answers",
    "probe.csv": "PROBE alpha grid (beta=0) and beta grid (alpha=1) per label set and system",
    "probe_heatmap.csv": "alpha x beta PROBE, min-max normalised per cell across systems",
    "discriminative_power.csv": "sorted p-values of the paired t-test (or Sakai's bootstrap) over all system pairs",
    "discriminative_auc.csv": "area under the sorted p-value curve and share of significant pairs per metric",
    "data_sensitivity.csv": "mean tau-b on random question subsets vs all questions",
}
FIGURE_FILES = {
    "depth_curve.png": "tau vs pooling depth per metric",
    "probe_heatmap.png": "PROBE alpha x beta heatmap (completed labels)",
    "discriminative_power.png": "sorted p-values per metric",
    "data_sensitivity.png": "data-sensitivity curves per metric (mean tau-b with a +-1 std band)",
    "open_world.png": "open-world simulation: tau-b vs share of dropped answers per metric",
    "reweighted.png": "tau-b vs sparse: completed vs completed reweighted with the sparse relation mix",
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
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "options": result.options,
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
        "relations": _records(result.relations),
        "averages": _records(result.averages),
        "reweighted": _records(result.reweighted, "system"),
        "reweighted_kendall": _records(result.reweighted_kendall, "metric"),
        "open_world": _records(result.open_world),
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
    csv("discriminative_auc.csv", result.discriminative_auc)
    csv("data_sensitivity.csv", result.data_sensitivity)
    csv("relations.csv", result.relations)
    csv("averages.csv", result.averages)
    if not result.reweighted.empty:
        csv("reweighted.csv", result.reweighted, index=True)
    if not result.reweighted_kendall.empty:
        csv("reweighted_kendall.csv", result.reweighted_kendall, index=True)
    csv("open_world.csv", result.open_world)
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
            sub = result.breakdown[result.breakdown.metric == "macro_MRR"]
            if not sub.empty:
                pivot = sub.pivot_table(index=["label_set", "group"], columns="system", values="value")
                lines += ["", "== macro MRR per relation category x side ==", pivot.to_string()]
        if not result.averages.empty:
            sub = result.averages[result.averages.metric == "micro_MRR"]
            pivot = sub.pivot_table(index=["label_set", "average"], columns="system", values="value")
            lines += ["", "== micro MRR averaged over relations / domains ==", pivot.to_string()]
        if not result.reweighted.empty:
            lines += ["", "== completed labels reweighted with the sparse relation distribution ==",
                      result.reweighted.to_string()]
        if not result.reweighted_kendall.empty:
            lines += ["", "== tau-b with the sparse relation mix ==", result.reweighted_kendall.to_string()]
        if not result.open_world.empty:
            pivot = result.open_world.pivot_table(index="drop_fraction", columns="metric", values="mean_tau",
                                                  sort=False)
            lines += ["", "== open-world simulation: mean tau-b vs closed world, per share of answers dropped ==",
                      pivot.to_string()]
        if result.timings:
            lines += ["", "timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items())]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ runs (database)
def result_dir(run: Any) -> str:
    return f"evaluation/runs/{run.pk}"


def create_run(sample: Sample, *, systems: list[System] | None = None, labels_file: str = "",
               pool: Pool | None = None, options: EvaluationOptions | None = None, name: str = "",
               campaign: Any = None) -> Any:
    """A pending EvaluationRun row (compute it with :func:`run_evaluation` or :func:`start_evaluation`).

    Labels: ``labels_file`` or ``campaign`` (its final labels; its pool gives the depths unless ``pool`` is given).
    """
    from evaluation.models import EvaluationRun
    from evaluation.services.labels import LabelError, check_campaign_sample

    systems = systems if systems is not None else evaluable_systems(sample)
    if labels_file and campaign is not None:
        raise EvaluationError("give a labels file or a campaign, not both")
    if labels_file and not Path(labels_file).is_file():
        raise EvaluationError(f"labels file {labels_file} does not exist")
    if campaign is not None:
        try:
            check_campaign_sample(campaign, sample)
        except LabelError as exc:
            raise EvaluationError(str(exc)) from None
    run = EvaluationRun.objects.create(
        sample=sample, name=name or f"{sample.name}", labels_file=str(labels_file or ""), pool=pool, campaign=campaign,
        options=(options or EvaluationOptions()).to_dict(),
    )
    run.systems.set(systems)
    return run


def start_evaluation(run: Any) -> None:
    """Compute the run on Celery once the current transaction commits: first ``score_evaluation`` (model scoring
    of the judged pairs not in the rank cache; route ``evaluation.tasks.score_*`` to the GPU queue), then
    ``run_evaluation`` (metrics, analyses, files; CPU)."""
    from django.db import transaction

    from evaluation.models import EvaluationRun
    from evaluation.tasks import evaluation_chain

    run_id = run.pk
    EvaluationRun.objects.filter(pk=run_id).update(status=EvaluationRun.Status.PENDING, stage="queued", error="",
                                                   progress_done=0, progress_total=0)
    transaction.on_commit(lambda: evaluation_chain(run_id).delay())


def run_source(run: Any) -> LabelSource | None:
    from evaluation.services.labels import CampaignLabels, JudgmentsFile

    if run.campaign_id:
        return CampaignLabels(run.campaign)
    return JudgmentsFile(Path(run.labels_file)) if run.labels_file else None


def _progress_writer(run: Any) -> ProgressFn:
    from evaluation.models import EvaluationRun

    def progress(stage: str, done: int, total: int) -> None:
        EvaluationRun.objects.filter(pk=run.pk).update(stage=stage[:100], progress_done=done, progress_total=total)

    return progress


def _fail(run: Any, exc: Exception) -> None:
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.FAILED,
                                                   error=f"{type(exc).__name__}: {exc}"[:10000],
                                                   finished_at=timezone.now())


def score_run(run: Any) -> dict[str, dict[str, int]]:
    """Stage 1 of a run: fill the rank cache for its systems (the only stage that needs torch / the GPU).

    Stores the per-system counts (pairs scored now / reused) in ``run.summary['scoring']``; idempotent."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    run.refresh_from_db()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING, error="", stage="scoring",
                                                   progress_done=0, progress_total=0, started_at=timezone.now())
    try:
        options = EvaluationOptions.from_dict(run.options)
        inputs = evaluation_inputs(run.sample, run_source(run), run.pool, options.depths)
        _ranks, stats = score_systems(inputs, list(run.systems.order_by("name")), device=options.device,
                                      progress=_progress_writer(run))
    except Exception as exc:
        _fail(run, exc)
        raise
    summary = dict(run.summary or {})
    summary["scoring"] = stats
    EvaluationRun.objects.filter(pk=run.pk).update(summary=summary)
    return stats


def run_inputs_digest(run: Any, inputs: EvaluationInputs) -> str:
    """What a run's outputs depend on: labels, pool, systems (model / ranking files) and options."""
    import hashlib

    from evaluation.services.ranks import system_fingerprint

    digest = hashlib.sha1(inputs.digest().encode())
    for system in run.systems.order_by("name"):
        digest.update(f"{system.name}={system_fingerprint(system, run.sample)};".encode())
    digest.update(json.dumps(run.options, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def run_evaluation(run: Any, *, figures: bool = True, force: bool = False) -> Any:
    """Compute an EvaluationRun: evaluate, write its files under STORAGE_DIR, store the summary. Idempotent.

    A re-run only recomputes what changed: model scores come from the rank cache (only judged pairs added since
    are scored), and when the labels, pool, systems and options are all unchanged since the stored result
    (``summary['input_digest']``) and its files are there, nothing is recomputed (stage ``unchanged``) unless
    ``force``.
    """
    from django.utils import timezone

    from evaluation.models import EvaluationRun

    run.refresh_from_db()
    previous = dict(run.summary or {})
    was_done = bool(run.result_dir) and run_file_exists(run)
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING, error="", stage="start",
                                                   progress_done=0, progress_total=0, started_at=timezone.now())
    try:
        options = EvaluationOptions.from_dict(run.options)
        source = run_source(run)
        inputs = evaluation_inputs(run.sample, source, run.pool, options.depths)
        digest = run_inputs_digest(run, inputs)
        if not force and was_done and previous.get("input_digest") == digest:
            previous.pop("scoring", None)
            EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.DONE, stage="unchanged",
                                                           progress_done=1, progress_total=1, summary=previous,
                                                           finished_at=timezone.now())
            run.refresh_from_db()
            return run
        result = evaluate_sample(run.sample, systems=list(run.systems.order_by("name")), source=source,
                                 pool=inputs.pool, options=options, progress=_progress_writer(run))
        scoring = previous.get("scoring")
        if scoring:  # stage 1 scored; the counts of this stage would all read "cached"
            result.rank_stats = {name: scoring.get(name, stats) for name, stats in result.rank_stats.items()}
        store_result(run, result, figures=figures, extra_summary={"input_digest": digest})
    except Exception as exc:
        _fail(run, exc)
        raise
    run.refresh_from_db()
    return run


def run_file_exists(run: Any) -> bool:
    from pooling.storage import storage_path

    return bool(run.result_dir) and storage_path(f"{run.result_dir}/summary.json").is_file()


def store_result(run: Any, result: EvaluationResult, *, figures: bool = True,
                 extra_summary: dict[str, Any] | None = None) -> Any:
    """Write ``result``'s files under STORAGE_DIR for ``run`` and mark it done."""
    from django.utils import timezone

    from evaluation.models import EvaluationRun
    from pooling.storage import storage_path

    relative = result_dir(run)
    files = write_outputs(result, storage_path(relative), figures=figures)
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=EvaluationRun.Status.DONE, result_dir=relative, files=files, seconds=result.seconds,
        summary={"kendall": _records(result.kendall, "metric"), "systems": result.systems,
                 "label_sets": _clean(result.label_stats), "rank_stats": _clean(result.rank_stats),
                 "timings": _clean(result.timings), **(extra_summary or {})},
        stage="done", error="", progress_done=1, progress_total=1, finished_at=timezone.now(),
    )
    run.refresh_from_db()
    return run
