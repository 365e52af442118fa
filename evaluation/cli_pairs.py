"""``pairs`` and ``property`` subcommands of ``python -m evaluation`` (issue #16; no Django, no torch).

    pairs RUN.tsv TEST.txt [--positives JUDGED.txt]... [--exclude TRAIN.txt]... [-k 100] [--per-relation] [--json]
        RUN.tsv: ``relation<TAB>head<TAB>tail<TAB>score`` per ranked pair (higher = better). Per relation the pairs
        are ranked by score descending, ties in file order; pairs of an --exclude file (train / valid triples) are
        dropped before the cut at K. Relevant pairs: the triples of TEST.txt plus those of every --positives file
        (judged-positive triples, or judgments ``h r t Y|N`` of which the Y count: completed labels). Prints MAP@K, P@K, WMAP@K, WP@K
        (:mod:`evaluation.core.pair_ranking`); --per-relation adds AP@K and P@K of every relation.
    property RUN.tsv TEST.txt --train TRAIN.txt [--known VALID.txt]... [--hits 1,3,10] [--policy realistic]
        RUN.tsv: ``head<TAB>relation<TAB>score`` lines. Questions: distinct test (h, r) with no (h, r, *) in train;
        each is ranked among the relations h does not have in train (and --known files); a relation without a
        score line for h scores -inf. Prints MR, MRR, Hits@K (:mod:`evaluation.core.property_prediction`).

Output: ``metric<TAB>group<TAB>value`` lines like ``micro`` (group ``all`` or a relation name), or one JSON object
with --json. Bad input: ``error: FILE:LINE: ...`` on stderr, exit status 2.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from typing import Any, TextIO

import numpy as np

from evaluation.core import micro
from evaluation.core.pair_ranking import TopPairs, pair_ranking_metrics
from evaluation.core.property_prediction import property_questions, property_ranks
from evaluation.inputs import InputError, _records, read_triples
from pooling.engine.userfiles import shown

__all__ = ["register", "run_pairs", "run_property"]


def _score(path: str, line: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, line, f"score is not a number: {shown(text)}") from None
    if math.isnan(value):
        raise InputError(path, line, "score is NaN")
    return value


POSITIVE_LABELS = {"y", "yes", "1", "true"}
NEGATIVE_LABELS = {"n", "no", "0", "false"}


def _read_positive_triples(path: str) -> list[tuple[str, str, str]]:
    """``h r t`` lines, or judgments ``h r t LABEL`` (Y / N, yes / no, 1 / 0): the positive ones."""
    triples: list[tuple[str, str, str]] = []
    for number, fields in _records(path):
        if len(fields) == 4:
            label = fields[3].lower()
            if label not in POSITIVE_LABELS | NEGATIVE_LABELS:
                raise InputError(path, number, f"label must be Y or N, got {shown(fields[3])}")
            if label in NEGATIVE_LABELS:
                continue
        elif len(fields) != 3:
            raise InputError(path, number, f"expected h r t or h r t LABEL, got {len(fields)} columns")
        triples.append((fields[0], fields[1], fields[2]))
    return triples


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {shown(text)}")
    return int(text)


def _write_rows(out: TextIO, rows: list[tuple[str, str, float]]) -> None:
    out.write("".join(f"{name:<10}\t{group}\t{value:.4f}\n" for name, group, value in rows))


# ---------------------------------------------------------------------- pairs
def run_pairs(args: argparse.Namespace, out: TextIO) -> int:
    k = args.k
    # Run: per relation, (score, line, head, tail); duplicates refused.
    ranked: dict[str, list[tuple[float, int, str, str]]] = defaultdict(list)
    seen: dict[tuple[str, str, str], int] = {}
    for number, fields in _records(args.run):
        if len(fields) != 4:
            raise InputError(args.run, number, f"expected 4 columns (relation head tail score), got {len(fields)}")
        relation, head, tail, score_text = fields
        key = (relation, head, tail)
        if key in seen:
            raise InputError(args.run, number, f"pair ({shown(head)}, {shown(tail)}) of relation {shown(relation)} "
                                               f"already ranked on line {seen[key]}")
        seen[key] = number
        ranked[relation].append((_score(args.run, number, score_text), number, head, tail))
    if not ranked:
        raise InputError(args.run, None, "no ranked pairs")
    excluded = {(h, r, t) for path in args.exclude or [] for h, r, t in read_triples(path)}
    relevant_names: dict[str, set[tuple[str, str]]] = defaultdict(set)
    test = read_triples(args.test)
    if not test:  # every metric would be nan (it printed nan and exit status 0)
        raise InputError(args.test, None, "no test triples")
    for h, r, t in test + [triple for path in args.positives or [] for triple in _read_positive_triples(path)]:
        relevant_names[r].add((h, t))
    # Encode names as ids (TopPairs holds ints); ranking: score descending, ties in file order.
    relation_names = sorted(set(ranked) | set(relevant_names))
    relation_id = {name: i for i, name in enumerate(relation_names)}
    entity_id: dict[str, int] = {}
    top: dict[int, TopPairs] = {}
    for relation, rows in ranked.items():
        kept = [row for row in sorted(rows, key=lambda row: (-row[0], row[1]))
                if (row[2], relation, row[3]) not in excluded][:k]
        heads = np.array([entity_id.setdefault(h, len(entity_id)) for _, _, h, _ in kept], dtype=np.int64)
        tails = np.array([entity_id.setdefault(t, len(entity_id)) for _, _, _, t in kept], dtype=np.int64)
        top[relation_id[relation]] = TopPairs(heads, tails, np.array([row[0] for row in kept], dtype=np.float64))
    relevant = {relation_id[r]: {(entity_id.setdefault(h, len(entity_id)), entity_id.setdefault(t, len(entity_id)))
                                 for h, t in pairs}
                for r, pairs in relevant_names.items()}
    metrics = pair_ranking_metrics(top, relevant, k)
    if metrics["missing"]:
        print(f"note: {len(metrics['missing'])} relation(s) with relevant pairs have no ranked pair in {args.run} "
              f"(counted as 0), e.g. {shown(relation_names[metrics['missing'][0]])}", file=sys.stderr)
    summary = [f"MAP@{k}", f"P@{k}", f"WMAP@{k}", f"WP@{k}"]
    per_relation = {relation_names[r]: values for r, values in metrics["per_relation"].items()}
    if args.json:
        document: dict[str, Any] = {name: metrics[name] for name in summary}
        document.update(k=k, num_relations=metrics["num_relations"],
                        missing=[relation_names[r] for r in metrics["missing"]])
        if args.per_relation:
            document["per_relation"] = per_relation
        out.write(json.dumps(document, indent=2, allow_nan=True) + "\n")
        return 0
    rows = [(name, "all", metrics[name]) for name in summary]
    if args.per_relation:
        for relation, values in per_relation.items():
            rows.extend((name, relation, values[name]) for name in (f"AP@{k}", f"P@{k}", "num_relevant"))
    _write_rows(out, rows)
    return 0


# ---------------------------------------------------------------------- property
def run_property(args: argparse.Namespace, out: TextIO) -> int:
    cutoffs = [c.strip() for c in args.hits.split(",") if c.strip()]
    if not cutoffs or not all(c.isascii() and c.isdigit() and len(c) <= 9 and int(c) >= 1 for c in cutoffs):
        raise InputError(None, None, f"--hits must be comma-separated positive integers, got {shown(args.hits)}")
    hits = [int(c) for c in cutoffs]
    train = read_triples(args.train)
    test = read_triples(args.test)
    known_extra = [triple for path in args.known or [] for triple in read_triples(path)]
    run_rows: list[tuple[int, str, str, float]] = []
    for number, fields in _records(args.run):
        if len(fields) != 3:
            raise InputError(args.run, number, f"expected 3 columns (head relation score), got {len(fields)}")
        run_rows.append((number, fields[0], fields[1], _score(args.run, number, fields[2])))
    if not run_rows:
        raise InputError(args.run, None, "no scores")
    relation_names = sorted({r for _, r, _ in train} | {r for _, r, _ in test} | {r for _, _, r, _ in run_rows})
    relation_id = {name: i for i, name in enumerate(relation_names)}
    entity_id: dict[str, int] = {}

    def encode(triples: list[tuple[str, str, str]]) -> np.ndarray:
        return np.array([(entity_id.setdefault(h, len(entity_id)), relation_id[r], 0) for h, r, _ in triples],
                        dtype=np.int64).reshape(-1, 3)

    train_ids, test_ids, known_ids = encode(train), encode(test), encode(known_extra)
    heads, relations = property_questions(train_ids, test_ids)
    if not len(heads):
        raise InputError(args.test, None, "no property questions: every test (head, relation) is in train")
    # Scores of the question heads only; a missing (head, relation) scores -inf.
    question_heads = np.unique(heads)
    row_of = {int(h): i for i, h in enumerate(question_heads)}
    scores = np.full((len(question_heads), len(relation_names)), -np.inf)
    written: dict[tuple[int, int], int] = {}
    for number, head, relation, value in run_rows:
        head_id = entity_id.get(head)
        if head_id is None or head_id not in row_of:
            continue
        key = (head_id, relation_id[relation])
        if key in written:
            raise InputError(args.run, number, f"head {shown(head)} and relation {shown(relation)} already scored on "
                                               f"line {written[key]}")
        written[key] = number
        scores[row_of[head_id], key[1]] = value
    rank = property_ranks(lambda batch: scores[[row_of[int(h)] for h in batch]], heads, relations,
                          np.concatenate([train_ids, known_ids]), num_relations=len(relation_names),
                          policy=args.policy)
    metrics = micro.micro_metrics(rank, hits)
    per_relation = micro.by_relation(rank, relations, relation_names, hits) if args.per_relation else {}
    if args.json:
        document: dict[str, Any] = {**metrics, "num_questions": int(len(rank)), "policy": args.policy}
        if args.per_relation:
            document["per_relation"] = per_relation
        out.write(json.dumps(document, indent=2) + "\n")
        return 0
    rows = [(name, "all", value) for name, value in metrics.items()]
    for relation, values in per_relation.items():
        rows.extend((name, relation, value) for name, value in values.items())
    _write_rows(out, rows)
    return 0


# ---------------------------------------------------------------------- parser
def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``pairs`` and ``property`` (each sets ``handler(args, out) -> exit code``)."""
    pairs = subparsers.add_parser("pairs", help="entity-pair ranking: MAP@K, P@K, WMAP@K, WP@K of a run of pairs",
                                  description="Entity-pair ranking metrics of a run of scored (h, t) pairs.")
    pairs.add_argument("run", metavar="RUN.tsv", help="relation<TAB>head<TAB>tail<TAB>score per ranked pair")
    pairs.add_argument("test", metavar="TEST.txt", help="test triples h r t: the relevant pairs")
    pairs.add_argument("--positives", action="append", metavar="JUDGED.txt",
                       help="judged-positive triples h r t, or judgments h r t Y|N (the Y ones), also "
                            "relevant (completed labels; repeatable)")
    pairs.add_argument("--exclude", action="append", metavar="TRAIN.txt",
                       help="known triples (train, valid) whose pairs are dropped from the run (repeatable)")
    pairs.add_argument("-k", type=_positive_int, default=100, help="cut-off K (default 100)")
    pairs.add_argument("--per-relation", action="store_true", help="also print AP@K and P@K per relation")
    pairs.add_argument("--json", action="store_true", help="print one JSON object")
    pairs.set_defaults(handler=run_pairs)

    prop = subparsers.add_parser("property", help="property prediction: MR, MRR, Hits@K of relation scores per head",
                                 description="Rank the relations of each head; questions are the test (h, r) "
                                             "where h has no r in train.")
    prop.add_argument("run", metavar="RUN.tsv", help="head<TAB>relation<TAB>score per line")
    prop.add_argument("test", metavar="TEST.txt", help="test triples h r t")
    prop.add_argument("--train", required=True, metavar="TRAIN.txt", help="train triples h r t")
    prop.add_argument("--known", action="append", metavar="VALID.txt",
                      help="more known triples whose (h, r) are filtered too (repeatable)")
    prop.add_argument("--hits", default="1,3,10", help="Hits@K cut-offs (default 1,3,10)")
    prop.add_argument("--policy", choices=("realistic", "optimistic", "pessimistic"), default="realistic",
                      help="tie policy (default realistic: ties count half)")
    prop.add_argument("--per-relation", action="store_true", help="also print the metrics per relation")
    prop.add_argument("--json", action="store_true", help="print one JSON object")
    prop.set_defaults(handler=run_property)
