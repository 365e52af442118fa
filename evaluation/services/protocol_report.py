"""The files, JSON and command-line tables of the protocols beyond link prediction (issue 16).

Written next to an evaluation's other files when the run asked for protocols (``EvaluationOptions.protocols``).
Torch-free, no database access.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from evaluation.services.json_records import records
from evaluation.services.protocols import ProtocolResults, kendall_matrix

PROTOCOL_FILES = {
    "protocol_status.csv": "per system and protocol: computed, or not computed and why",
    "classification.csv": "triple classification per label set, negatives source, system and subset (all, "
                          "type-consistent or -inconsistent negatives): accuracy, precision, recall, F1, ROC-AUC, "
                          "PR-AUC",
    "classification_groups.csv": "triple classification per relation and per relation category",
    "classification_negatives.csv": "positives and negatives of each classification source (valid, test), with "
                                     "the type-consistent / -inconsistent split",
    "pair_ranking.csv": "entity-pair ranking per label set and system: MAP@K, P@K, WMAP@K, WP@K",
    "pair_ranking_relations.csv": "entity-pair ranking per relation: relevant pairs, AP@K, P@K",
    "property.csv": "property prediction per label set and system: MR, MRR, Hits@K",
    "protocol_kendall.csv": "Kendall's tau-b between the system orderings of every two (protocol, label set)",
}
PROTOCOL_FIGURES = {
    "classification_curves.png": "ROC and precision-recall curves per system",
    "pair_ranking_relations.png": "AP@K per relation per system",
    "protocol_kendall.png": "tau-b between protocols' orderings (heatmap)",
}


def protocol_json(results: ProtocolResults | None) -> dict[str, Any] | None:
    if results is None:
        return None
    return {
        "pair_k": results.pair_k,
        "status": records(results.status),
        "negatives": records(results.negatives),
        "classification": records(results.classification),
        "classification_groups": records(results.classification_groups),
        "pair_ranking": records(results.pair_ranking),
        "pair_ranking_relations": records(results.pair_ranking_relations),
        "property": records(results.property),
        "kendall": records(results.kendall),
    }


def write_protocol_files(results: ProtocolResults | None, out: Path) -> list[str]:
    if results is None:
        return []
    written = []
    for name, frame in (("protocol_status.csv", results.status), ("classification.csv", results.classification),
                        ("classification_groups.csv", results.classification_groups),
                        ("classification_negatives.csv", results.negatives),
                        ("pair_ranking.csv", results.pair_ranking),
                        ("pair_ranking_relations.csv", results.pair_ranking_relations),
                        ("property.csv", results.property), ("protocol_kendall.csv", results.kendall)):
        frame.to_csv(out / name, index=False, float_format="%.6g")
        written.append(name)
    return written


def protocol_lines(results: ProtocolResults | None) -> list[str]:
    """Plain-text tables for the command line."""
    if results is None:
        return []
    lines = ["", "== protocols: computed or not, per system =="]
    lines += [f"  {row.system} / {row.protocol}: {row.status}" for row in results.status.itertuples()]
    frame = results.classification
    if not frame.empty:
        pivot = frame[frame.metric.isin(["accuracy", "F1", "ROC-AUC", "PR-AUC"])].pivot_table(
            index=["label_set", "negatives", "subset", "system"], columns="metric", values="value", sort=False)
        lines += ["", "== triple classification ==", pivot.to_string()]
    for title, frame in ((f"entity-pair ranking (K = {results.pair_k})", results.pair_ranking),
                         ("property prediction", results.property)):
        if not frame.empty:
            pivot = frame.pivot_table(index=["label_set", "system"], columns="metric", values="value", sort=False)
            lines += ["", f"== {title} ==", pivot.to_string()]
    if not results.kendall.empty:
        lines += ["", "== Kendall's tau-b between protocols' system orderings ==",
                  kendall_matrix(results.kendall).to_string()]
    return lines


def protocol_tables(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report page's tables, from summary.json's ``protocols`` (each {'columns', 'rows': [(label, values)]})."""
    if not data:
        return None
    status: dict[str, dict[str, str]] = {}
    for row in data.get("status", []):
        status.setdefault(row["system"], {})[row["protocol"]] = row["status"]
    protocols = list(dict.fromkeys(row["protocol"] for row in data.get("status", [])))
    out: dict[str, Any] = {
        "pair_k": data.get("pair_k"),
        "status": {"columns": protocols, "rows": [(s, [v.get(p, "") for p in protocols]) for s, v in status.items()]},
    }

    def side_by_side(records: list[dict], index: list[str], metric_filter=None) -> dict:
        """Rows = systems (x the index columns), columns = metric x label set (sparse and completed side by side)."""
        frame = pd.DataFrame(records)
        if frame.empty:
            return {"columns": [], "rows": []}
        if metric_filter is not None:
            frame = frame[frame.metric.isin(metric_filter)]
        frame = frame.assign(column=frame.metric + " (" + frame.label_set + ")")
        pivot = frame.pivot_table(index=index, columns="column", values="value", sort=False)
        columns = list(pivot.columns)
        rows = [(" / ".join(map(str, key)) if isinstance(key, tuple) else str(key),
                 [None if pd.isna(v) else float(v) for v in values]) for key, values in zip(pivot.index, pivot.values)]
        return {"columns": columns, "rows": rows}

    out["classification"] = side_by_side(data.get("classification", []), ["negatives", "subset", "system"],
                                         ["accuracy", "precision", "recall", "F1", "ROC-AUC", "PR-AUC"])
    out["negatives"] = {"columns": ["label set", "split", "positives", "negatives", "consistent", "inconsistent"],
                        "rows": [(row["negatives"], [row["label_set"], row["split"], row["positives"],
                                                     row["negatives_total"], row["consistent"], row["inconsistent"]])
                                 for row in data.get("negatives", [])]}
    out["pair_ranking"] = side_by_side(data.get("pair_ranking", []), ["system"], ["MAP@K", "P@K", "WMAP@K", "WP@K"])
    out["property"] = side_by_side(data.get("property", []), ["system"])
    kendall = pd.DataFrame(data.get("kendall", []))
    if not kendall.empty:
        matrix = kendall_matrix(kendall)
        out["kendall"] = {"columns": list(matrix.columns),
                          "rows": [(name, [None if pd.isna(v) else float(v) for v in matrix.loc[name]])
                                   for name in matrix.index]}
    else:
        out["kendall"] = {"columns": [], "rows": []}
    return out
