"""``python -m evaluation classify VALID.tsv TEST.tsv [--json]``: triple classification from two score files
(no Django, no torch); the protocol is :func:`evaluation.core.classification.evaluate`.

Score files: one scored triple per line, tab-separated (whitespace when a line has no tab)::

    head  relation  tail  score  label  [consistent]

``score``: a finite number, higher = more plausible; ``label``: 1 (true) or 0 (false); ``consistent`` (optional,
the same number of columns on every line): 1 when a negative's replaced entity has a type of the relation's side,
else 0 (ignored on positives); with it the test metrics are also split "consistent vs inconsistent" (every
positive with each kind of negative, the study's Table 8). Blank lines and ``#`` comments are skipped; the first
line may be a header (``label`` in the label column). A triple may appear once per file.

Thresholds are learned per relation on VALID (maximising accuracy, ties to the smallest threshold) and applied to
TEST; a relation absent from VALID uses the global threshold learned on all of VALID. ``roc_auc`` / ``pr_auc``
pool every test triple (scores compared across relations); ``roc_auc_macro`` / ``pr_auc_macro`` are their mean
over the relations where they are defined. Text output: one
``metric<TAB>group<TAB>value`` line per value, groups ``all``, ``consistent``, ``inconsistent``, each category
(with --categories or --train) and each relation (sorted); ``--json`` prints one object instead. NaN marks an
undefined value (``nan`` in text, ``null`` in JSON). Bad input: ``error: FILE:LINE: ...`` on stderr, exit 2.
"""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from evaluation.core import classification
from evaluation.inputs import InputError, _records, relation_categories
from pooling.engine.userfiles import shown

__all__ = ["ScoreFile", "read_score_file", "run_classify", "register"]

SCORE_COLUMNS = ("head", "relation", "tail", "score", "label")
SUMMARY_NAMES = (*classification.METRIC_NAMES, "roc_auc", "pr_auc", "roc_auc_macro", "pr_auc_macro", "count", "tp",
                 "fp", "tn", "fn")


@dataclass(frozen=True)
class ScoreFile:
    """The scored triples of one file, every column as an array."""

    head: np.ndarray  # object (str)
    relation: np.ndarray  # object (str)
    tail: np.ndarray  # object (str)
    score: np.ndarray  # float64, finite
    label: np.ndarray  # bool
    consistent: np.ndarray | None  # bool, None without the column

    def __len__(self) -> int:
        return len(self.score)


def _flag(path: str | Path, line: int, column: str, text: str) -> bool:
    if text not in ("0", "1"):
        raise InputError(path, line, f"{column} must be 1 or 0, got {shown(text)}")
    return text == "1"


def read_score_file(path: str | Path) -> ScoreFile:
    """Read a score file (module docstring); InputError naming file:line on the first problem."""
    names: list[tuple[str, str, str]] = []
    scores: list[float] = []
    labels: list[bool] = []
    consistent: list[bool] = []
    width: int | None = None
    first_line: dict[tuple[str, str, str], int] = {}
    for number, fields in _records(path):
        if len(fields) not in (5, 6):
            raise InputError(path, number, f"expected 5 or 6 columns ({' '.join(SCORE_COLUMNS)} [consistent]), "
                                           f"got {len(fields)}")
        if width is None and fields[4] == "label":  # header line
            width = len(fields)
            continue
        if width is not None and len(fields) != width:
            raise InputError(path, number, f"expected {width} columns like the lines before, got {len(fields)}")
        width = len(fields)
        head, relation, tail, score_text, label_text = fields[:5]
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(path, number, f"score is not a number: {shown(score_text)}") from None
        if not math.isfinite(score):
            raise InputError(path, number, f"score is not finite: {shown(score_text)}")
        triple = (head, relation, tail)
        if triple in first_line:
            raise InputError(path, number, f"duplicate triple {shown(' '.join(triple))} "
                                           f"(first on line {first_line[triple]})")
        first_line[triple] = number
        labels.append(_flag(path, number, "label", label_text))
        if width == 6:
            consistent.append(_flag(path, number, "consistent", fields[5]))
        names.append(triple)
        scores.append(score)
    if not names:
        raise InputError(path, None, "no scored triples")
    table = np.array(names, dtype=object)
    return ScoreFile(table[:, 0], table[:, 1], table[:, 2], np.array(scores, dtype=np.float64),
                     np.array(labels, dtype=bool), np.array(consistent, dtype=bool) if width == 6 else None)


def _number(value: float | int) -> float | int | None:
    """JSON-safe: NaN -> None, numpy scalars -> Python numbers."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    return None if math.isnan(value) else value


def _categories(args: argparse.Namespace, relation_names: np.ndarray) -> np.ndarray | None:
    if not (args.categories or args.train):
        return None
    return relation_categories(args, relation_names)


def run_classify(args: argparse.Namespace, out: TextIO) -> int:
    valid = read_score_file(args.valid)
    test = read_score_file(args.test)
    if valid.label.all() or not valid.label.any():
        which = "negatives" if valid.label.all() else "positives"
        raise InputError(args.valid, None, f"has no {which}: thresholds need both classes")
    names = np.array(sorted(set(valid.relation) | set(test.relation)), dtype=object)
    index = {name: i for i, name in enumerate(names)}
    valid_ids = np.array([index[r] for r in valid.relation], dtype=np.int64)
    test_ids = np.array([index[r] for r in test.relation], dtype=np.int64)
    categories = _categories(args, names)
    category_names: list[str] = []
    category_ids = None
    if categories is not None:
        category_names = sorted(set(categories))
        category_ids = np.array([category_names.index(c) for c in categories], dtype=np.int64)[test_ids]
    result = classification.evaluate(
        valid.score, valid.label, valid_ids, test.score, test.label, test_ids, len(names),
        test_consistent=test.consistent, test_groups=category_ids, num_groups=len(category_names) or None)
    thresholds: classification.Thresholds = result["thresholds"]
    in_test = np.bincount(test_ids, minlength=len(names)) > 0

    summaries: dict[str, dict] = {"all": result["overall"]}
    for split in ("consistent", "inconsistent"):
        if split in result:
            summaries[split] = result[split]
    per_category = {name: {key: values[i] for key, values in result["per_group"].items()}
                    for i, name in enumerate(category_names)} if category_ids is not None else {}
    per_relation: dict[str, dict] = {}
    for i, name in enumerate(names):
        if not in_test[i]:
            continue
        values = {key: array[i] for key, array in result["per_relation"].items()}
        values["threshold"] = float(thresholds.for_relations(np.array([i]))[0])
        values["own_threshold"] = bool(thresholds.learned[i])
        per_relation[str(name)] = values

    if args.json:
        document = {
            "validation": {"file": str(args.valid), "triples": len(valid), "positives": int(valid.label.sum())},
            "test": {"file": str(args.test), "triples": len(test), "positives": int(test.label.sum())},
            "fallback_threshold": _number(thresholds.fallback),
            **{name: {k: _number(v) for k, v in summary.items()} for name, summary in summaries.items()},
            "per_category": {name: {k: _number(v) for k, v in values.items()} for name, values in per_category.items()},
            "per_relation": {name: {k: (v if isinstance(v, bool) else _number(v)) for k, v in values.items()}
                             for name, values in per_relation.items()},
        }
        if "consistent" not in summaries:
            document["consistent"] = document["inconsistent"] = None
        out.write(json.dumps(document, indent=2, allow_nan=False) + "\n")
        return 0
    rows: list[tuple[str, str, str]] = []

    def add(group: str, values: dict, names_: tuple[str, ...]) -> None:
        for key in names_:
            if key in values:
                value = values[key]
                text = str(int(value)) if isinstance(value, (int, np.integer, bool)) else format(float(value), ".4f")
                rows.append((key, group, text))

    for group, summary in summaries.items():
        add(group, summary, SUMMARY_NAMES)
    for group, values in per_category.items():
        add(group, values, SUMMARY_NAMES)
    rows.append(("threshold", "fallback", format(thresholds.fallback, ".6g")))
    for group, values in per_relation.items():
        add(group, values, SUMMARY_NAMES)
        rows.append(("threshold", group, format(values["threshold"], ".6g")))
        rows.append(("own_threshold", group, "1" if values["own_threshold"] else "0"))
    out.write("".join(f"{name:<13}\t{group}\t{value}\n" for name, group, value in rows))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``classify`` (sets ``handler``: run_classify(args, out))."""
    parser = subparsers.add_parser(
        "classify", help="triple classification: thresholds from validation scores, metrics on test scores",
        description="Per-relation thresholds learned on VALID (max accuracy), applied to TEST: accuracy, "
                    "precision, recall, F1, ROC-AUC, PR-AUC overall, per relation, consistent vs inconsistent.")
    parser.add_argument("valid", metavar="VALID.tsv",
                        help="head, relation, tail, score, label (1/0)[, consistent (1/0)] per line (TSV)")
    parser.add_argument("test", metavar="TEST.tsv", help="same layout as VALID.tsv")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text lines")
    parser.add_argument("--train", metavar="TRAIN.txt", help="train triples h r t: also report per relation "
                                                             "category (1-1, 1-N, N-1, N-N)")
    parser.add_argument("--categories", metavar="CATEGORIES.tsv",
                        help="relation<TAB>category file: also report per category")
    parser.set_defaults(handler=run_classify)
