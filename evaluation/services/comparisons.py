"""Comparisons across label sets and systems (SPEC 5.5): Kendall's tau-b sparse vs completed, the pooling-depth
curve, the completed labels reweighted with the sparse relation mix, discriminative power, data sensitivity and
the open-world simulation. Torch-free; inputs are the per-label-set results of ``evaluation.services.label_metrics``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evaluation.core import analyses
from evaluation.core import micro as micro_core
from evaluation.core import rank_family
from evaluation.core.kendall import compare_metric_tables
from evaluation.services import metrics as m
from evaluation.services.labels import LabelSet
from evaluation.services.ranks import JudgedRanks
from evaluation.services.result import (
    KEY_METRICS, OPEN_WORLD_METRICS, EvaluationOptions, empty_auc, empty_dp, empty_ds, empty_open_world,
)
from pooling.engine.questions import Questions


def kendall(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    if "completed" not in tables or len(tables["sparse"]) < 2:
        return pd.DataFrame(columns=["tau"], index=pd.Index([], name="metric"))
    tau = compare_metric_tables(tables["sparse"], tables["completed"])
    return tau.to_frame("tau")


def depth_curve(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    depth_names = sorted((int(name.split("@")[1]), name) for name in tables if name.startswith("completed@"))
    sparse = tables["sparse"]
    if not depth_names or len(sparse) < 2:
        return pd.DataFrame(index=pd.Index([], name="depth"))
    metrics = list(sparse.columns)
    stacked = np.stack([tables[name][metrics].to_numpy(dtype=np.float64) for _d, name in depth_names])
    curve = analyses.pooling_depth_curve(sparse[metrics].to_numpy(dtype=np.float64), stacked,
                                         [d for d, _n in depth_names])
    return pd.DataFrame(curve, index=pd.Index([d for d, _n in depth_names], name="depth"), columns=metrics)


def reweighted(tables: dict[str, pd.DataFrame], sets: dict[str, LabelSet], main_micro: dict[str, dict[str, Any]],
               questions: Questions, num_relations: int, names: list[str], options: EvaluationOptions
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
            rows.append({f"micro_{n}": math.nan for n in rank_family.family_names(options.hits)})
            continue
        rows.append(m.micro_reweighted_values(mr, relation, usable, options.hits))
    table = pd.DataFrame(rows, index=pd.Index(names, name="system"))
    if len(names) < 2:
        return table, pd.DataFrame()
    metrics = list(table.columns)
    sparse, completed = tables["sparse"][metrics], tables["completed"][metrics]
    taus = pd.DataFrame({
        "tau_sparse_vs_completed": compare_metric_tables(sparse, completed),
        "tau_sparse_vs_reweighted": compare_metric_tables(sparse, table),
        "tau_completed_vs_reweighted": compare_metric_tables(completed, table),
    })
    taus.index.name = "metric"
    return table, taus


def significance(per_query: dict[str, dict[str, np.ndarray]], options: EvaluationOptions
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Discriminative power (sorted p-values and their AUC) and data sensitivity of the key metrics."""
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
    return (pd.DataFrame(dp_rows, columns=empty_dp().columns), pd.DataFrame(auc_rows, columns=empty_auc().columns),
            pd.DataFrame(ds_rows, columns=empty_ds().columns))


def open_world(micro: dict[str, m.MicroRanks], ranks: dict[str, JudgedRanks], names: list[str],
               options: EvaluationOptions) -> pd.DataFrame:
    """Open-world simulation (SPEC 5.5) on the completed labels: drop a share of the true answers, recompute.

    Micro metrics: a dropped answer is no longer filtered, so each kept answer it outscores moves down one rank
    (half a rank on a tie; ``analyses.AnswerRankShift``). Macro MRR / Hits@10: a question's min rank over its kept
    answers (macro ranks filter train + valid only, so dropping does not move them); questions left without an
    answer drop out. tau-b is against the closed-world (nothing dropped) ordering; mean and std over the repeats.
    """
    first = micro[names[0]]
    if first.ranks.size < 2:
        return empty_open_world()
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
    return pd.DataFrame(rows, columns=empty_open_world().columns)
