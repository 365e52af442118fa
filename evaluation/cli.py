"""Command line: ``python -m evaluation {trec,macro,micro,...}`` (no Django, no torch).

- ``trec QRELS RUN [-q] [-c] [-l LEVEL] [-m MEASURE ...]``: trec_eval-compatible output lines
  ``measure<TAB>qid<TAB>value`` (measure name left-justified to 22 characters as trec_eval does,
  values with 4 decimals, ``all`` for the summary).
- ``macro QRELS RUN``: the same with kgpool's default macro measures.
- ``micro RANKS.tsv [--hits 1,3,10] [--by side|relation|category|domain]``: answer-wise metrics.

Other subcommands (probe, kendall) are added by ``evaluation.cli_analysis.register`` when present.
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

from evaluation.core import macro, micro
from evaluation.core.trec import TrecFormatError, judged_ranking_from_trec, read_qrels, read_run
from evaluation.inputs import InputError, read_ranks, read_triples, read_two_columns

#: trec_eval-like default set (its "official" measures that this module implements, plus ndcg).
DEFAULT_TREC_MEASURES: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    "P", "ndcg",
)
#: kgpool's macro measures (pool depth 10 in the published campaign).
DEFAULT_MACRO_MEASURES: tuple[str, ...] = (
    "num_q", "recip_rank", "success.1,3,10", "map_cut.10", "ndcg_cut.10", "P.10", "bpref", "infAP",
)
_SUMMARY_ONLY = ("runid", "num_q")
_INTEGER_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret"})


# ---------------------------------------------------------------------- trec / macro
def _format_line(name: str, qid: str, value: float | str) -> str:
    if isinstance(value, str):
        text = value
    elif name in _INTEGER_MEASURES:
        text = str(int(round(value)))
    else:
        text = f"{value:.4f}"
    return f"{name:<22}\t{qid}\t{text}"


def run_trec(args: argparse.Namespace, out: TextIO, default_measures: Sequence[str]) -> int:
    requested = [m for group in (args.measure or [list(default_measures)]) for m in group]
    special = [m for m in requested if m in _SUMMARY_ONLY]
    measures = macro.expand_measures([m for m in requested if m not in _SUMMARY_ONLY])
    qrels = read_qrels(args.qrels)
    run = read_run(args.run)
    judged = judged_ranking_from_trec(qrels, run, complete=args.complete, relevance_level=args.level)
    if judged.num_queries == 0:
        raise InputError(args.run, None, "no queries with both results and relevance info")
    per_query = macro.evaluate(judged, measures)
    lines: list[str] = []
    if args.per_query:
        for index, qid in enumerate(judged.query_ids):
            lines += [_format_line(name, qid, values[index]) for name, values in per_query.items()]
    summary = macro.mean_over_queries(per_query, judged)
    for name in _summary_order(special, measures):
        if name == "runid":
            lines.append(_format_line(name, "all", run.tag))
        elif name == "num_q":
            lines.append(_format_line(name, "all", judged.num_queries))
        else:
            lines.append(_format_line(name, "all", summary[name]))
    out.write("\n".join(lines) + "\n")
    return 0


def _summary_order(special: Sequence[str], measures: Sequence[str]) -> list[str]:
    """Summary lines: runid / num_q first (as trec_eval prints them), then the measures."""
    return [m for m in _SUMMARY_ONLY if m in special] + list(measures)


# ---------------------------------------------------------------------- micro
def _relation_categories(args: argparse.Namespace, relation_names: np.ndarray) -> np.ndarray:
    if args.categories:
        source = args.categories
        table = read_two_columns(source, "category")
    elif args.train:
        try:
            categories_module = importlib.import_module("pooling.engine.categories")
        except ImportError:
            raise InputError(None, None, "--by category with --train needs pooling.engine.categories "
                                         "(not installed); give --categories RELATION_CATEGORY.tsv instead") from None
        source = args.train
        triples = read_triples(source)
        # Encode names: relation ids over train + ranked relations, entity ids over train.
        relation_vocabulary = sorted({r for _, r, _ in triples} | set(relation_names))
        relation_id = {name: i for i, name in enumerate(relation_vocabulary)}
        entity_id: dict[str, int] = {}
        encoded = np.array([(entity_id.setdefault(h, len(entity_id)), relation_id[r],
                             entity_id.setdefault(t, len(entity_id))) for h, r, t in triples],
                           dtype=np.int64).reshape(-1, 3)
        per_relation = categories_module.relation_categories(encoded, len(relation_vocabulary))[0]
        table = {name: str(per_relation[relation_id[name]]) for name in relation_names}
    else:
        raise InputError(None, None, "--by category needs --train TRAIN.txt or --categories FILE")
    missing = [name for name in relation_names if name not in table]
    if missing:
        raise InputError(source, None, f"no category for relation {missing[0]!r}")
    categories = np.array([table[name] for name in relation_names], dtype=object)
    bad = [c for c in categories if c not in micro.CATEGORIES]
    if bad:
        raise InputError(source, None, f"unknown relation category {bad[0]!r}; expected one of {micro.CATEGORIES}")
    return categories


def run_micro(args: argparse.Namespace, out: TextIO) -> int:
    try:
        hits = [int(k) for k in args.hits.split(",") if k]
    except ValueError:
        raise InputError(None, None, f"--hits must be comma-separated integers, got {args.hits!r}") from None
    data = read_ranks(args.ranks)
    rank, relation, side, names = data.rank, data.relation_codes, data.side, data.relation_names
    rows: list[tuple[str, str, float]] = []

    def add(group: str, metrics: dict[str, float]) -> None:
        rows.extend((name, group, value) for name, value in metrics.items())

    add("all", micro.micro_metrics(rank, hits))
    for by in args.by or []:
        if by == "side":
            for label, metrics in micro.by_side(rank, side, hits).items():
                add(label, metrics)
        elif by == "relation":
            for label, metrics in micro.by_relation(rank, relation, list(names), hits).items():
                add(label, metrics)
            add("macro-relation", micro.macro_over_relations(rank, relation, hits))
        elif by == "domain":
            codes, labels = micro.group_codes(list(names))
            means, counts = micro.grouped_metrics(rank, codes[relation], len(labels), hits)
            for i, label in enumerate(labels):
                if counts[i]:
                    add(label, {name: float(v[i]) for name, v in means.items()})
            add("macro-domain", micro.macro_over_groups(rank, relation, codes, hits))
        elif by == "category":
            categories = _relation_categories(args, names)
            for label, metrics in micro.by_category_side(rank, relation, side, categories, hits).items():
                add(label, metrics)
    if args.relation_weights:
        table = read_two_columns(args.relation_weights, "weight", float)
        weights = np.array([table.get(name, 0.0) for name in names])  # unlisted relations weigh 0
        try:
            add("reweighted", micro.reweighted(rank, relation, weights, hits))
        except ValueError as exc:
            raise InputError(args.relation_weights, None, str(exc)) from None
    out.write("\n".join(f"{name:<10}\t{group}\t{value:.4f}" for name, group, value in rows) + "\n")
    return 0


# ---------------------------------------------------------------------- parser
def _add_trec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", help="qrels file: qid iter docid rel")
    parser.add_argument("run", help="run file: qid Q0 docid rank score tag")
    parser.add_argument("-q", dest="per_query", action="store_true", help="also print per-query values")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over all qrels queries (missing ones score 0), like trec_eval -c")
    parser.add_argument("-l", dest="level", type=int, default=1, help="relevance level (default 1)")
    parser.add_argument("-m", dest="measure", action="append", nargs="+", metavar="MEASURE",
                        help="measure(s): map, P, P.5,10, ndcg_cut_20, success.1,10, bpref, infAP, "
                             "all_trec, ... (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluation",
                                     description="kgpool evaluation (trec_eval-compatible macro, micro, ...)")
    subparsers = parser.add_subparsers(dest="command", required=True)

    trec = subparsers.add_parser("trec", help="trec_eval-compatible evaluation of a run file")
    _add_trec_arguments(trec)
    trec.set_defaults(handler=lambda a, out: run_trec(a, out, DEFAULT_TREC_MEASURES))

    macro_parser = subparsers.add_parser("macro", help="trec with kgpool's default macro measures")
    _add_trec_arguments(macro_parser)
    macro_parser.set_defaults(handler=lambda a, out: run_trec(a, out, DEFAULT_MACRO_MEASURES))

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
    micro_parser.set_defaults(handler=run_micro)

    try:
        analysis = importlib.import_module("evaluation.cli_analysis")
    except ModuleNotFoundError as exc:
        if exc.name != "evaluation.cli_analysis":
            raise
    else:
        analysis.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
