"""The metrics of every system on one label set: the table row per system (micro, macro, PROBE, p-MRR, log-MRR),
the breakdowns (relation category x side, per relation, averages over relations / domains), the PROBE grids, the
per-question values the significance analyses need, and the coverage counts. Torch-free.

The metric families themselves live in ``evaluation.services.metrics`` (one place to plug a new family in);
this module only assembles them per label set.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evaluation.core import micro as micro_core
from evaluation.core import probe as probe_core
from evaluation.services import metrics as m
from evaluation.services.coverage import coverage_row
from evaluation.services.labels import LabelSet
from evaluation.services.ranks import JudgedRanks
from evaluation.services.result import P_MRR, EvaluationOptions
from pooling.engine.questions import Questions, Ragged


@dataclass(frozen=True)
class MetricContext:
    """What the label sets share: the evaluated questions and the KG facts the breakdowns need."""

    questions: Questions
    qids: list[str]
    num_sampled: int  # the first rows are the sample's questions, the rest completion questions
    num_entities: int
    test_answers: Ragged
    tv_filter: Ragged
    popularity: probe_core.TrainPopularity
    categories: list[str]  # per relation
    relation_keys: list[str]
    domain_codes: np.ndarray
    measures: dict[str, str]  # macro column -> trec_eval measure

    @property
    def question_category(self) -> np.ndarray:
        if not len(self.questions):
            return np.zeros(0, object)
        return np.array(self.categories, dtype=object)[self.questions.relation]


@dataclass
class LabelSetMetrics:
    """Everything computed on one label set."""

    table: pd.DataFrame
    stats: dict[str, Any]
    labels: m.QuestionLabels
    micro: dict[str, m.MicroRanks] = field(default_factory=dict)  # system -> micro ranks
    breakdown_rows: list[dict[str, Any]] = field(default_factory=list)
    relation_rows: list[dict[str, Any]] = field(default_factory=list)
    average_rows: list[dict[str, Any]] = field(default_factory=list)
    coverage_rows: list[dict[str, Any]] = field(default_factory=list)
    probe_alpha: pd.DataFrame | None = None
    probe_beta: pd.DataFrame | None = None
    probe_heatmap: dict[str, Any] | None = None
    per_query: dict[str, np.ndarray] = field(default_factory=dict)  # metric -> (systems, queries)


def rank_curve_values(ranks: np.ndarray) -> dict[str, float]:
    """p-MRR for p in :data:`P_MRR` and log-MRR of micro ranks (SPEC 5.4), NaN without ranks."""
    values: dict[str, float] = {}
    for num, den in P_MRR:
        values[f"pMRR_{num}/{den}"] = float(probe_core.p_mrr(ranks, num / den)) if ranks.size else math.nan
    values["logMRR"] = float(probe_core.log_mrr(ranks)) if ranks.size else math.nan
    return values


def label_set_metrics(set_name: str, label_set: LabelSet, ctx: MetricContext, ranks: dict[str, JudgedRanks],
                      options: EvaluationOptions, *, main: bool) -> LabelSetMetrics:
    """Metrics of every system of ``ranks`` on ``label_set``; ``main`` (sparse / completed) adds the breakdowns,
    the PROBE grids and the per-question values of the analyses."""
    questions = ctx.questions
    positives, negatives = label_set.answers(questions)
    labels = m.QuestionLabels.build(questions, positives, negatives, ctx.test_answers, ctx.tv_filter,
                                    ctx.num_entities)
    evaluated = labels.evaluated
    stats = {"triples": len(label_set), "positives": label_set.num_positive, "negatives": label_set.num_negative,
             "answers": int(positives.nnz), "judged_negative_answers": int(negatives.take(evaluated).nnz),
             "questions": int(evaluated.size), "sampled_questions": int((evaluated < ctx.num_sampled).sum()),
             **label_set.stats}
    result = LabelSetMetrics(pd.DataFrame(), stats, labels)
    names = list(ranks)
    rows, micro_rank_matrix, micro_values, macro_values = [], [], [], []
    micro_candidates, probe_deltas = None, None
    for name in names:
        jr = ranks[name]
        mr = m.micro_ranks(jr, labels, options.policy)
        row = m.micro_values(mr, options.hits)
        macro_pq = m.macro_per_question(jr, labels, ctx.measures, options.policy)
        row.update({column: _mean_of_defined(values) for column, values in macro_pq.items()})
        if probe_deltas is None:
            probe_deltas = m.probe_inputs(ctx.popularity, mr, questions)
            stats["micro_rankings"] = int(mr.ranks.size)
        row["PROBE"] = probe_core.probe_score(mr.ranks, mr.num_candidates, probe_deltas.entity_delta,
                                              probe_deltas.relation_delta, options.probe_alpha,
                                              options.probe_beta) if mr.ranks.size else math.nan
        row.update(rank_curve_values(mr.ranks))
        rows.append(row)
        result.coverage_rows.append({"label_set": set_name, "system": name, **coverage_row(jr, labels, mr)})
        micro_rank_matrix.append(mr.ranks)
        micro_candidates = mr.num_candidates if micro_candidates is None else micro_candidates
        if main:
            result.micro[name] = mr
            micro_values.append(m.micro_per_answer(mr, options.hits))
            macro_values.append(macro_pq)
            _breakdowns(result, set_name, name, mr, macro_pq, ctx, options)
    result.table = pd.DataFrame(rows, index=pd.Index(names, name="system"))
    if main and micro_rank_matrix and micro_rank_matrix[0].size:
        _probe_grids(result, names, np.stack(micro_rank_matrix), micro_candidates, probe_deltas)
    if main:
        if micro_values and micro_values[0]:
            for metric in micro_values[0]:
                result.per_query[metric] = np.stack([v[metric] for v in micro_values])
        for metric in ctx.measures:
            result.per_query[metric] = np.stack([v[metric] for v in macro_values])
        if micro_rank_matrix and micro_rank_matrix[0].size and options.probe_beta == 0:
            result.per_query["PROBE"] = probe_core.rank_transform(np.stack(micro_rank_matrix), micro_candidates,
                                                                  options.probe_alpha)
    return result


def _probe_grids(result: LabelSetMetrics, names: list[str], stacked: np.ndarray, candidates: np.ndarray,
                 deltas: m.ProbeInputs) -> None:
    ed, rd = deltas.entity_delta, deltas.relation_delta
    alpha_grid = probe_core.probe_alpha_grid(stacked, candidates, ed, rd, probe_core.ALPHA_GRID)
    beta_grid = probe_core.probe_beta_grid(stacked, candidates, ed, rd, probe_core.BETA_GRID)
    index = pd.Index(names, name="system")
    result.probe_alpha = pd.DataFrame(alpha_grid.T, index=index,
                                      columns=[f"alpha={a:g}" for a in probe_core.ALPHA_GRID])
    result.probe_beta = pd.DataFrame(beta_grid.T, index=index, columns=[f"beta={b:g}" for b in probe_core.BETA_GRID])
    heat = probe_core.probe_heatmap(stacked, candidates, ed, rd, probe_core.ALPHA_GRID, probe_core.BETA_GRID,
                                    normalise=len(names) > 1)
    result.probe_heatmap = {"alphas": list(probe_core.ALPHA_GRID), "betas": list(probe_core.BETA_GRID),
                            "systems": names, "values": np.asarray(heat).tolist()}


def _breakdowns(result: LabelSetMetrics, set_name: str, name: str, mr: m.MicroRanks,
                macro_pq: dict[str, np.ndarray], ctx: MetricContext, options: EvaluationOptions) -> None:
    """Micro per category x side, per side, per relation, averaged over relations / domains; macro per category x
    side (over the label set's questions)."""
    questions, categories, hits = ctx.questions, ctx.categories, options.hits
    relation = questions.relation[mr.question]
    side = questions.side[mr.question].astype(np.int64)
    if mr.ranks.size:
        counts = _group_counts(relation, side, categories)
        for group, values in micro_core.by_category_side(mr.ranks, relation, side, categories, hits).items():
            for metric, value in values.items():
                result.breakdown_rows.append({"label_set": set_name, "system": name, "group": group,
                                              "metric": f"micro_{metric}", "value": value,
                                              "count": counts.get(group, 0)})
        for group, values in micro_core.by_side(mr.ranks, side, hits).items():
            for metric, value in values.items():
                result.breakdown_rows.append({"label_set": set_name, "system": name, "group": f"all/{group}",
                                              "metric": f"micro_{metric}", "value": value,
                                              "count": int((side == (0 if group == "head" else 1)).sum())})
        result.relation_rows += _relation_rows(set_name, name, mr.ranks, relation, ctx.relation_keys, categories, hits)
        for average, values in (
                ("relations", micro_core.macro_over_relations(mr.ranks, relation, hits)),
                ("domains", micro_core.macro_over_groups(mr.ranks, relation, ctx.domain_codes, hits))):
            for metric, value in values.items():
                result.average_rows.append({"label_set": set_name, "system": name, "average": average,
                                            "metric": f"micro_{metric}", "value": value})
    evaluated = result.labels.evaluated
    result.breakdown_rows += _macro_category_rows(set_name, name, macro_pq, ctx.question_category[evaluated],
                                                  questions.side[evaluated].astype(np.int64))


def _group_counts(relation: np.ndarray, side: np.ndarray, categories: list[str]) -> dict[str, int]:
    labels = np.array(categories, dtype=object)[relation]
    counts: dict[str, int] = {}
    for category, s in zip(labels.tolist(), side.tolist()):
        key = f"{category}/{'head' if s == 0 else 'tail'}"
        counts[key] = counts.get(key, 0) + 1
    return counts


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
    rows: list[dict[str, Any]] = []
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
                             "value": _mean_of_defined(values[mask]), "count": count})
    return rows


def _mean_of_defined(values: np.ndarray) -> float:
    """Mean over the questions where the measure is defined: macro_MR is NaN for a question without a relevant
    answer (evaluation.core.macro_rank) and such a question is left out, as the core's summary does."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else math.nan
