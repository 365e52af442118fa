"""``probe`` and ``kendall`` subcommands of ``python -m evaluation`` (no Django, no torch).

``evaluation.cli`` builds the parser and calls ``register(subparsers)``; each subcommand sets
``func=handler`` with ``handler(args) -> int`` (the exit code). Bad input gives one line on stderr naming the
file and the 1-based line, and exit code 2 (like argparse's own usage errors), never a traceback.

    probe --ranks RANKS.tsv --train TRAIN.txt [--alpha A] [--beta B] [--grid]
        RANKS.tsv: head<TAB>relation<TAB>tail<TAB>side<TAB>rank<TAB>num_candidates per ranked query; side is
        ``head`` (the answer is the head entity) or ``tail``; rank may be fractional (ties), 1 <= rank <= N.
        TRAIN.txt: ``h r t`` per line, tab-separated (or whitespace-separated when a line has no tab).
        Prints the PROBE score, or with --grid the SPEC 5.4 alpha grid (beta = 0) and beta grid (alpha = 1) as
        TSV with the header ``grid alpha beta probe``.
    kendall A.csv B.csv
        CSV tables, header ``system,metric1,metric2,...``, one row per system. Prints ``metric<TAB>tau``
        (Kendall's tau-b over the common systems) for every metric present in both, in A's column order.

Blank lines and lines starting with ``#`` are skipped in RANKS and TRAIN.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["register", "InputError", "RankedQueries", "read_ranks", "read_train", "read_metric_table",
           "run_probe", "run_kendall"]

INPUT_ERROR_EXIT_CODE = 2


class InputError(Exception):
    """A user-facing input problem; ``str()`` is the one-line message ``FILE:LINE: what is wrong``."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        location = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{location}: {message}")


def _numbered_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without the line ending); decoding errors name their line."""
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise InputError(path, None, f"cannot read file: {error.strerror or error}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise InputError(path, number, "not valid UTF-8 text") from None


def _fields(text: str) -> list[str]:
    return text.split("\t") if "\t" in text else text.split()


def _skip(text: str) -> bool:
    return not text.strip() or text.lstrip().startswith("#")


@dataclass(frozen=True)
class RankedQueries:
    """One entry per ranked query: answer entity and relation names, rank and candidate count."""

    answer_entities: list[str]
    relations: list[str]
    ranks: np.ndarray
    num_candidates: np.ndarray


def read_ranks(path: str | Path) -> RankedQueries:
    answers: list[str] = []
    relations: list[str] = []
    ranks: list[float] = []
    candidates: list[int] = []
    for number, text in _numbered_lines(path):
        if _skip(text):
            continue
        fields = _fields(text)
        if len(fields) != 6:
            raise InputError(path, number, f"expected 6 columns (head relation tail side rank num_candidates), "
                                           f"got {len(fields)}")
        head, relation, tail, side, rank_text, candidates_text = (field.strip() for field in fields)
        if side not in ("head", "tail"):
            raise InputError(path, number, f"side must be 'head' or 'tail', got {side!r}")
        try:
            rank = float(rank_text)
        except ValueError:
            raise InputError(path, number, f"rank is not a number: {rank_text!r}") from None
        try:
            n_candidates = float(candidates_text)
        except ValueError:
            raise InputError(path, number, f"num_candidates is not a number: {candidates_text!r}") from None
        if not math.isfinite(n_candidates) or n_candidates != int(n_candidates) or n_candidates < 1:
            raise InputError(path, number, f"num_candidates must be a positive integer, got {candidates_text!r}")
        if not math.isfinite(rank) or rank < 1 or rank > n_candidates:
            raise InputError(path, number, f"rank must be between 1 and num_candidates ({int(n_candidates)}), "
                                           f"got {rank_text}")
        answers.append(head if side == "head" else tail)
        relations.append(relation)
        ranks.append(rank)
        candidates.append(int(n_candidates))
    if not ranks:
        raise InputError(path, None, "no ranked queries")
    return RankedQueries(answers, relations, np.array(ranks, dtype=np.float64),
                         np.array(candidates, dtype=np.int64))


def read_train(path: str | Path) -> list[tuple[str, str, str]]:
    triples: list[tuple[str, str, str]] = []
    for number, text in _numbered_lines(path):
        if _skip(text):
            continue
        fields = [field.strip() for field in _fields(text)]
        if len(fields) != 3:
            raise InputError(path, number, f"expected 3 columns (h r t), got {len(fields)}")
        triples.append((fields[0], fields[1], fields[2]))
    return triples


def read_metric_table(path: str | Path):  # -> pandas.DataFrame (pandas imported lazily)
    """CSV: header ``system,metric...``, one row per system, numeric values."""
    import pandas as pd

    lines = [text for _, text in _numbered_lines(path)]  # reading first gives file/encoding errors a line
    rows = list(csv.reader(lines))
    numbered = [(number, row) for number, row in enumerate(rows, start=1) if row and any(c.strip() for c in row)]
    if not numbered:
        raise InputError(path, None, "empty table")
    header_line, header = numbered[0]
    metrics = [name.strip() for name in header[1:]]
    if not metrics:
        raise InputError(path, header_line, "the header needs a system column and at least one metric column")
    if len(set(metrics)) != len(metrics):
        raise InputError(path, header_line, "duplicate metric name in the header")
    systems: list[str] = []
    values: list[list[float]] = []
    for number, row in numbered[1:]:
        if len(row) != len(header):
            raise InputError(path, number, f"expected {len(header)} columns, got {len(row)}")
        system = row[0].strip()
        if system in systems:
            raise InputError(path, number, f"duplicate system {system!r}")
        try:
            values.append([float(cell) for cell in row[1:]])
        except ValueError:
            bad = next(cell for cell in row[1:] if not _is_float(cell))
            raise InputError(path, number, f"value is not a number: {bad!r}") from None
        systems.append(system)
    return pd.DataFrame(values, index=pd.Index(systems, name="system"), columns=metrics)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _format(value: float) -> str:
    return format(float(value), ".10g")


def run_probe(args: argparse.Namespace) -> int:
    from evaluation.core.probe import ALPHA_GRID, BETA_GRID, TrainPopularity, probe_alpha_grid, probe_beta_grid
    from evaluation.core.probe import probe_score

    try:
        queries = read_ranks(args.ranks)
        train = read_train(args.train)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return INPUT_ERROR_EXIT_CODE
    # Ids from the train names; an answer or relation absent from train gets -1: zero popularity.
    entity_ids: dict[str, int] = {}
    relation_ids: dict[str, int] = {}
    train_ids = np.array(
        [(entity_ids.setdefault(h, len(entity_ids)), relation_ids.setdefault(r, len(relation_ids)),
          entity_ids.setdefault(t, len(entity_ids))) for h, r, t in train],
        dtype=np.int64,
    ).reshape(-1, 3)
    popularity = TrainPopularity.from_triples(train_ids, len(entity_ids), max(len(relation_ids), 1))
    answers = np.array([entity_ids.get(name, -1) for name in queries.answer_entities], dtype=np.int64)
    relations = np.array([relation_ids.get(name, -1) for name in queries.relations], dtype=np.int64)
    entity_delta, relation_delta = popularity.query_deltas(answers, relations)
    if args.grid:
        alpha_scores = probe_alpha_grid(queries.ranks, queries.num_candidates, entity_delta, relation_delta)
        beta_scores = probe_beta_grid(queries.ranks, queries.num_candidates, entity_delta, relation_delta)
        print("grid\talpha\tbeta\tprobe")
        for alpha, score in zip(ALPHA_GRID, alpha_scores):
            print(f"alpha\t{_format(alpha)}\t0\t{_format(score)}")
        for beta, score in zip(BETA_GRID, beta_scores):
            print(f"beta\t1\t{_format(beta)}\t{_format(score)}")
    else:
        score = probe_score(queries.ranks, queries.num_candidates, entity_delta, relation_delta,
                            alpha=args.alpha, beta=args.beta)
        print(_format(score))
    return 0


def run_kendall(args: argparse.Namespace) -> int:
    from evaluation.core.kendall import compare_metric_tables

    try:
        table_a = read_metric_table(args.table_a)
        table_b = read_metric_table(args.table_b)
        common_systems = [s for s in table_a.index if s in set(table_b.index)]
        if len(common_systems) < 2:
            raise InputError(args.table_b, None,
                             f"shares {len(common_systems)} system(s) with {args.table_a}; need at least 2")
        if not any(metric in set(table_b.columns) for metric in table_a.columns):
            raise InputError(args.table_b, None, f"shares no metric column with {args.table_a}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return INPUT_ERROR_EXIT_CODE
    if len(common_systems) < max(len(table_a), len(table_b)):
        print(f"note: using the {len(common_systems)} systems common to both tables", file=sys.stderr)
    for metric, tau in compare_metric_tables(table_a, table_b).items():
        print(f"{metric}\t{_format(tau)}")
    return 0


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite: {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``probe`` and ``kendall`` subcommands (each sets ``func``: handler(args) -> exit code)."""
    probe = subparsers.add_parser(
        "probe",
        help="PROBE score of one run (SPEC 5.4)",
        description="PROBE = sum w_i f*(r_i) / sum w_i with popularity weights from the train triples.",
    )
    probe.add_argument("--ranks", required=True, metavar="RANKS.tsv",
                       help="head, relation, tail, side (head|tail), rank, num_candidates per line (TSV)")
    probe.add_argument("--train", required=True, metavar="TRAIN.txt", help="train triples h r t")
    probe.add_argument("--alpha", type=_finite_float, default=1.0, help="predictive sharpness (default 1)")
    probe.add_argument("--beta", type=_finite_float, default=0.0, help="popularity-bias robustness (default 0)")
    probe.add_argument("--grid", action="store_true",
                       help="print the alpha grid (beta=0) and beta grid (alpha=1) as TSV instead")
    probe.set_defaults(func=run_probe)

    kendall = subparsers.add_parser(
        "kendall",
        help="Kendall's tau-b per metric between two system x metric tables",
        description="Prints metric<TAB>tau for every metric column present in both CSV tables.",
    )
    kendall.add_argument("table_a", metavar="A.csv", help="first column system name, one column per metric")
    kendall.add_argument("table_b", metavar="B.csv", help="same layout as A.csv")
    kendall.set_defaults(func=run_kendall)
