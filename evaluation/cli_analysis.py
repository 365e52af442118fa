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

Files are read by :mod:`evaluation.inputs`: blank lines and ``#`` comments are skipped in RANKS and TRAIN, and
RANKS may start with a header line.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from evaluation.inputs import InputError, finite_number, read_metric_table, read_ranks, read_triples
from pooling.engine.userfiles import shown

__all__ = ["register", "run_probe", "run_kendall"]

INPUT_ERROR_EXIT_CODE = 2


def _format(value: float) -> str:
    return format(float(value), ".10g")


def run_probe(args: argparse.Namespace) -> int:
    from evaluation.core.probe import ALPHA_GRID, BETA_GRID, TrainPopularity, probe_alpha_grid, probe_beta_grid
    from evaluation.core.probe import probe_score

    try:
        queries = read_ranks(args.ranks)
        train = read_triples(args.train)
        if not train:  # every popularity would be 0 (it was taken without a word)
            raise InputError(args.train, None, "no train triples: PROBE weighs each answer by its popularity in train")
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
    answers = np.array([entity_ids.get(name, -1) for name in queries.answers], dtype=np.int64)
    relations = np.array([relation_ids.get(name, -1) for name in queries.relation], dtype=np.int64)
    entity_delta, relation_delta = popularity.query_deltas(answers, relations)
    if args.grid:
        alpha_scores = probe_alpha_grid(queries.rank, queries.num_candidates, entity_delta, relation_delta)
        beta_scores = probe_beta_grid(queries.rank, queries.num_candidates, entity_delta, relation_delta)
        print("grid\talpha\tbeta\tprobe")
        for alpha, score in zip(ALPHA_GRID, alpha_scores):
            print(f"alpha\t{_format(alpha)}\t0\t{_format(score)}")
        for beta, score in zip(BETA_GRID, beta_scores):
            print(f"beta\t1\t{_format(beta)}\t{_format(score)}")
    else:
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            score = probe_score(queries.rank, queries.num_candidates, entity_delta, relation_delta,
                                alpha=args.alpha, beta=args.beta)
        if not np.isfinite(score):  # numpy's overflow warnings and "nan" before
            print(f"error: PROBE is not a finite number at alpha {_format(args.alpha)}, beta {_format(args.beta)}: "
                  "the weights (popularity ** -beta) or the rank transform leave the floating-point range; the "
                  "usual values lie in [-1, 1]", file=sys.stderr)
            return INPUT_ERROR_EXIT_CODE
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
        return finite_number(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error}: {shown(text)}") from None


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
