"""The files of an evaluation (CSV/JSON and PNG figures) and its plain-text tables for the command line.

Every table of an :class:`evaluation.services.result.EvaluationResult` has one file (``OUTPUT_FILES``);
``summary.json`` holds them all (the report page reads it). ``coverage.csv`` says per label set and system how many
questions, answers and judged entities the system's scores could not rank (a run too shallow for them,
``evaluation.services.coverage``). Torch-free, no database access.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluation.services.json_records import json_safe, records
from evaluation.services.protocol_report import (
    PROTOCOL_FIGURES, PROTOCOL_FILES, protocol_json, protocol_lines, write_protocol_files,
)
from evaluation.services.result import KEY_METRICS, EvaluationResult

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
    "coverage.csv": "per label set and system: questions, answers and judged entities its scores could not rank "
                    "(a run too shallow for them)",
    **PROTOCOL_FILES,  # only when the run asked for protocols beyond link prediction
}
FIGURE_FILES = {
    "depth_curve.png": "tau vs pooling depth per metric",
    "probe_heatmap.png": "PROBE alpha x beta heatmap (completed labels)",
    "discriminative_power.png": "sorted p-values per metric",
    "data_sensitivity.png": "data-sensitivity curves per metric (mean tau-b with a +-1 std band)",
    "open_world.png": "open-world simulation: tau-b vs share of dropped answers per metric",
    "reweighted.png": "tau-b vs sparse: completed vs completed reweighted with the sparse relation mix",
    **PROTOCOL_FIGURES,
}


def result_to_json(result: EvaluationResult) -> dict[str, Any]:
    return json_safe({
        "sample": result.sample,
        "systems": result.systems,
        "seconds": round(result.seconds, 3),
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "options": result.options,
        "label_sets": result.label_stats,
        "rank_stats": result.rank_stats,
        "tables": {name: records(table, "system") for name, table in result.tables.items()},
        "metrics": list(next(iter(result.tables.values())).columns) if result.tables else [],
        "kendall": records(result.kendall, "metric"),
        "depth_curve": records(result.depth_curve, "depth"),
        "breakdown": records(result.breakdown),
        "probe_alpha": {name: records(frame, "system") for name, frame in result.probe_alpha.items()},
        "probe_beta": {name: records(frame, "system") for name, frame in result.probe_beta.items()},
        "probe_heatmap": result.probe_heatmap,
        "discriminative_auc": records(result.discriminative_auc),
        "discriminative_power": records(result.discriminative_power),
        "data_sensitivity": records(result.data_sensitivity),
        "relations": records(result.relations),
        "averages": records(result.averages),
        "reweighted": records(result.reweighted, "system"),
        "reweighted_kendall": records(result.reweighted_kendall, "metric"),
        "open_world": records(result.open_world),
        "coverage": records(result.coverage),
        "protocols": protocol_json(result.protocols),
    })


def metrics_long_table(result: EvaluationResult) -> pd.DataFrame:
    frames = [table.reset_index().assign(label_set=name) for name, table in result.tables.items()]
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[["label_set", "system"] + [c for c in frame.columns if c not in ("label_set", "system")]]
    frame.insert(2, "tie_policy", result.options.get("policy", "realistic"))
    return frame


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
    csv("coverage.csv", result.coverage)
    written += write_protocol_files(result.protocols, out)
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
                     f"{stats.get('questions', 0)} questions ({stats.get('sampled_questions', 0)} sampled), "
                     f"{stats.get('micro_rankings', 0)} micro rankings")
    lines += coverage_lines(result)
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
        lines += protocol_lines(result.protocols)
        if result.timings:
            lines += ["", "timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items())]
    return "\n".join(lines) + "\n"


def coverage_lines(result: EvaluationResult) -> list[str]:
    """One line per (main label set, system) whose scores left something unranked: the "too shallow" counts."""
    frame = result.coverage
    if frame.empty:
        return []
    short = frame[frame.label_set.isin(result.main_label_sets())
                  & ((frame.answers_unranked > 0) | (frame.judged_unranked > 0) | (frame.questions_not_scored > 0))]
    return [f"  {row.system} on {row.label_set}: too shallow for {row.answers_unranked} of {row.answers} answers "
            f"(ranked below its run, tied with the unretrieved) and {row.judged_unranked} of {row.judged} judged "
            f"entities (not retrieved for macro metrics)"
            + (f"; {row.questions_not_scored} of {row.questions} questions are not in it at all"
               if row.questions_not_scored else "")
            for row in short.itertuples()]
