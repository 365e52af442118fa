"""The evaluation service's public entry points, one import away (commands, views, tasks, the case study).

Where each concept lives (one module each, no import cycles: this module only re-exports):

- ``result``: :class:`EvaluationOptions`, :class:`EvaluationResult` and the shapes of its tables;
- ``labels``: label sources and the sparse / completed / completed@d label sets;
- ``inputs``: the evaluated questions (sample + completion questions), the universe to rank, systems' ranks;
- ``scores`` / ``ranks``: every system's scores (model, kept score matrix, kept run) ranked by one engine;
- ``metrics``: the metric families (micro, macro, PROBE) -- where a new family plugs into the report;
- ``coverage``: what a system's scores could not rank (runs too shallow);
- ``label_metrics``: per label set, the table, breakdowns, PROBE grids, per-question values;
- ``comparisons``: Kendall's tau-b, depth curve, reweighting, significance, open-world simulation;
- ``compute``: :func:`evaluate_sample`, the stages in order;
- ``report``: CSV/JSON/PNG files and the command line's tables;
- ``runs``: ``EvaluationRun`` rows (create, queue, score, compute, store).
"""
from __future__ import annotations

from evaluation.services.compute import evaluate_sample
from evaluation.services.errors import EvaluationError
from evaluation.services.inputs import EvaluationInputs, evaluable_systems, evaluation_inputs, score_systems
from evaluation.services.label_metrics import rank_curve_values
from evaluation.services.report import (
    FIGURE_FILES, OUTPUT_FILES, format_tables, metrics_long_table, result_to_json, write_outputs,
)
from evaluation.services.result import (
    KEY_METRICS, OPEN_WORLD_METRICS, P_MRR, EvaluationOptions, EvaluationResult,
)
from evaluation.services.runs import (
    create_run, result_dir, run_evaluation, run_file_exists, run_inputs_digest, run_source, score_run,
    start_evaluation, store_result,
)

__all__ = [
    "EvaluationError", "EvaluationInputs", "EvaluationOptions", "EvaluationResult", "FIGURE_FILES", "KEY_METRICS",
    "OPEN_WORLD_METRICS", "OUTPUT_FILES", "P_MRR", "create_run", "evaluable_systems", "evaluate_sample",
    "evaluation_inputs", "format_tables", "metrics_long_table", "rank_curve_values", "result_dir", "result_to_json",
    "run_evaluation", "run_file_exists", "run_inputs_digest", "run_source", "score_run", "score_systems",
    "start_evaluation", "store_result", "write_outputs",
]
