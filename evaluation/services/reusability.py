"""Pool reusability of a judged set (issue 20): leave each pooled system, and each architecture family, out of
the pool and see how far its metrics and its place move (``evaluation/core/reusability.py``).

Labels: the sampled test triples plus the oracle's labels of the pool's entries (a campaign's final labels or a
labels file). Leaving systems out removes the labels of the entries only they retrieved (people and rules
labelled them because those systems pooled them). Results go to ``VAR_DIR/reusability/<campaign or sample>.json``,
which the exported set's README (``annotation/services/datasheet.py``) quotes.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from annotation.selectors.pool_view import pool_view
from evaluation.core.reusability import leave_out
from evaluation.services.label_scoring import LabelScorer
from evaluation.services.labels import LabelSource, completed_label_set
from pooling.models import Pool, Sample, System

HEADLINE = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10")


def result_path(name: str) -> Path:
    return Path(settings.VAR_DIR) / "reusability" / f"{name}.json"


def pool_reusability(sample: Sample, source: LabelSource, pool: Pool, systems: list[System] | None = None,
                     metrics: tuple[str, ...] | None = HEADLINE) -> dict[str, Any]:
    kg = sample.kg
    view, index = pool_view(pool)
    systems = systems if systems is not None else [System.objects.get(pk=pk) for pk in index.system_pks]
    completed = completed_label_set(sample, source.judged_triples(kg), pool)
    num_e, num_r = max(kg.num_entities, 1), max(kg.num_relations, 1)
    keys = lambda t: (t[:, 0] * num_r + t[:, 1]) * num_e + t[:, 2]  # noqa: E731
    label_keys, item_keys = keys(completed.triples), keys(index.triples)
    order = np.argsort(item_keys)
    position = np.minimum(np.searchsorted(item_keys[order], label_keys), max(len(item_keys) - 1, 0))
    row_item = np.where(item_keys[order][position] == label_keys, order[position], -1) if len(item_keys) else (
        np.full(len(label_keys), -1))
    keep_rows = (row_item >= 0) | (completed.depth == 0)
    row_item = row_item[keep_rows]
    scorer = LabelScorer(sample, systems, completed.triples[keep_rows], completed.positive[keep_rows])
    names = scorer.system_names
    view_index = {name: i for i, name in enumerate(index.system_names)}
    member = [view_index[name] for name in names]

    def kept_items(left_out: list[int]) -> np.ndarray:
        return view.items_without([member[s] for s in left_out])

    def score(kept: np.ndarray) -> dict[str, np.ndarray]:
        include = row_item < 0
        include[~include] = kept[row_item[~include]]
        return scorer.scores(include)

    architecture = {name: arch for name, arch in zip(index.system_names, index.system_architectures)}
    groups = [(name, [i]) for i, name in enumerate(names)]
    families: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        families.setdefault(architecture.get(name, name), []).append(i)
    groups += [(f"family:{family}", members) for family, members in sorted(families.items()) if len(members) > 1]
    rows = leave_out(names, groups, kept_items, score, metrics)
    return {"sample": f"{kg.name}/{sample.name}", "pool": pool.name, "depth": pool.depth, "systems": names,
            "metrics": list(metrics) if metrics else None, "rows": rows, "summary": summarise(rows)}


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per group and metric (left-out systems only): largest relative drop and largest place change."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["group"], row["metric"])
        entry = out.setdefault(key, {"group": row["group"], "metric": row["metric"], "items_left_out": row["items_left_out"],
                                     "max_relative_drop": 0.0, "max_places_lost": 0, "tau": row["tau_full_vs_reduced"]})
        if not math.isnan(row["relative_change"]):
            entry["max_relative_drop"] = max(entry["max_relative_drop"], -row["relative_change"])
        entry["max_places_lost"] = max(entry["max_places_lost"], row["place_reduced"] - row["place_full"])
    return list(out.values())


def save(result: dict[str, Any], name: str) -> Path:
    path = result_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean = json.loads(json.dumps(result, default=float).replace("NaN", "null"))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(clean, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path
