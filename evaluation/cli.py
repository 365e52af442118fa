"""Command line: ``python -m evaluation {trec,macro,micro,...}`` (no Django, no torch).

- ``trec [trec_eval options] QRELS RUN``: trec_eval 10's command line and output, see :mod:`evaluation.cli_trec`.
- ``macro QRELS RUN``: the same with kgpool's default macro measures.
- ``micro RANKS.tsv [--hits 1,3,10] [--by side|relation|category|domain] [--family]``: answer-wise metrics;
  ``--family`` adds PyKEEN's rank-based family (adjusted, z-scored, ...) from each line's num_candidates.

- ``classify VALID.tsv TEST.tsv [--json]``: triple classification from two score files, see
  :mod:`evaluation.cli_classify`.

Other subcommands (probe, kendall) are added by ``evaluation.cli_analysis.register`` when present; ``pairs`` and
``property`` (entity-pair ranking, property prediction) by ``evaluation.cli_pairs.register``.
Input files are read by :mod:`evaluation.inputs`. Bad input: a one-line ``error: FILE:LINE: ...`` on stderr,
exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from typing import Sequence, TextIO

import numpy as np

from evaluation import cli_classify
from evaluation.core import macro, micro, rank_family
from evaluation.core.trec import TrecFormatError
from evaluation.inputs import InputError, finite_number, read_ranks, read_two_columns, relation_categories
from pooling.engine.userfiles import shown


# ---------------------------------------------------------------------- micro
def run_micro(args: argparse.Namespace, out: TextIO) -> int:
    cutoffs = [k.strip() for k in args.hits.split(",") if k.strip()]
    if not all(k.isascii() and k.isdigit() and len(k) <= 10 and 1 <= int(k) < 2**31 for k in cutoffs):  # not ²
        raise InputError(None, None, f"--hits must be comma-separated positive integers, got {shown(args.hits)}")
    hits = [int(k) for k in cutoffs]
    data = read_ranks(args.ranks)
    rank, relation, side, names = data.rank, data.relation_codes, data.side, data.relation_names
    candidates = data.num_candidates
    rows: list[tuple[str, str, float]] = []

    def family(mask: np.ndarray | slice = slice(None), weights: np.ndarray | None = None) -> dict[str, float]:
        """The rank family beyond MR / MRR / Hits@K of these rankings (nothing without --family)."""
        if not args.family:
            return {}
        values = rank_family.rank_family(rank[mask], candidates[mask], hits, weights)
        return {name: values[name] for name in rank_family.added_names(hits)}

    def add(group: str, metrics: dict[str, float], group_of: np.ndarray | None = None, index: int = 0) -> None:
        """Rows of one group; ``group_of == index`` selects its rankings for the family (all when None)."""
        metrics = {**metrics, **family(slice(None) if group_of is None else group_of == index)}
        rows.extend((name, group, value) for name, value in metrics.items())

    add("all", micro.micro_metrics(rank, hits))
    for by in args.by or []:
        if by == "side":
            for label, metrics in micro.by_side(rank, side, hits).items():
                add(label, metrics, side, micro.SIDE_NAMES.index(label))
        elif by == "relation":
            for label, metrics in micro.by_relation(rank, relation, list(names), hits).items():
                add(label, metrics, relation, list(names).index(label))
            rows.extend((n, "macro-relation", v) for n, v in micro.macro_over_relations(rank, relation, hits).items())
        elif by == "domain":
            codes, labels = micro.group_codes(list(names))
            means, counts = micro.grouped_metrics(rank, codes[relation], len(labels), hits)
            for i, label in enumerate(labels):
                if counts[i]:
                    add(label, {name: float(v[i]) for name, v in means.items()}, codes[relation], i)
            rows.extend((n, "macro-domain", v) for n, v in micro.macro_over_groups(rank, relation, codes, hits).items())
        elif by == "category":
            categories = relation_categories(args, names)
            group = micro.category_codes(categories)[relation] * 2 + side  # as micro.by_category_side
            labels = [f"{c}/{s}" for c in micro.CATEGORIES for s in micro.SIDE_NAMES]
            for label, metrics in micro.by_category_side(rank, relation, side, categories, hits).items():
                add(label, metrics, group, labels.index(label))
    if args.relation_weights:
        table = read_two_columns(args.relation_weights, "weight", finite_number)
        weights = np.array([table.get(name, 0.0) for name in names])  # unlisted relations weigh 0
        try:
            metrics = micro.reweighted(rank, relation, weights, hits)
            metrics.update(family(weights=rank_family.per_ranking_weights(relation, weights)))
        except ValueError as exc:
            raise InputError(args.relation_weights, None, str(exc)) from None
        rows.extend((name, "reweighted", value) for name, value in metrics.items())
    out.write("\n".join(f"{name:<10}\t{group}\t{value:.4f}" for name, group, value in rows) + "\n")
    return 0


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluation",
                                     description="kgpool evaluation (trec_eval-compatible macro, micro, ...)")
    subparsers = parser.add_subparsers(dest="command", required=True)

    # trec / macro read trec_eval's own command line (evaluation.cli_trec); main() hands them over
    subparsers.add_parser("trec", add_help=False, help="trec_eval: [-q] [-c] [-m measure]... QRELS RUN (trec -h)")
    subparsers.add_parser("macro", add_help=False, help="trec with kgpool's default macro measures")

    micro_parser = subparsers.add_parser("micro", help="answer-wise MR / MRR / Hits@K")
    micro_parser.add_argument("ranks", metavar="RANKS.tsv",
                              help="head, relation, tail, side (head|tail), rank, num_candidates per line (TSV)")
    micro_parser.add_argument("--hits", default="1,3,10", help="Hits@K cut-offs (default 1,3,10)")
    micro_parser.add_argument("--by", action="append", choices=("side", "relation", "category", "domain"),
                              help="breakdown (repeatable)")
    micro_parser.add_argument("--train", metavar="TRAIN.txt", help="train triples h r t (for --by category)")
    micro_parser.add_argument("--categories", metavar="CATEGORIES.tsv",
                              help="relation<TAB>category file (for --by category)")
    micro_parser.add_argument("--relation-weights", metavar="WEIGHTS.tsv",
                              help="relation<TAB>weight file: also print the reweighted micro metrics")
    micro_parser.add_argument("--family", action="store_true",
                              help="also print PyKEEN's rank-based family from each line's num_candidates: AMR, "
                                   "AMRI, zMR, AMRR, zMRR, AHits@K, zHits@K, GMR, IGMR, AGMRI, zGMR, HMR, MedR, "
                                   "RankStd, RankVar, RankMAD (not in the macro-* rows)")
    micro_parser.set_defaults(handler=run_micro)

    cli_classify.register(subparsers)

    try:
        analysis = importlib.import_module("evaluation.cli_analysis")
    except ModuleNotFoundError as exc:
        if exc.name != "evaluation.cli_analysis":
            raise
    else:
        analysis.register(subparsers)
    from evaluation import cli_pairs  # pairs / property (issue #16)

    cli_pairs.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; Ctrl-C ends it with one line and exit status 130, as the management commands do (a
    KeyboardInterrupt traceback from inside pandas before)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("trec", "macro"):
        from evaluation import cli_trec

        return cli_trec.main(argv[0], argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    # Our handlers take (args, out); subcommands registered by others may set `handler` or `func`
    # taking just (args).
    handler = getattr(args, "handler", None) or getattr(args, "func")
    takes_output = len(inspect.signature(handler).parameters) >= 2
    try:
        status = handler(args, sys.stdout) if takes_output else handler(args)
        return int(status or 0)
    except (TrecFormatError, InputError, macro.UnknownMeasureError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
