"""Readers for the files given to ``python -m evaluation`` (no Django, no torch; pandas only for CSV).

They live beside the CLI, not in ``evaluation.core``: core takes arrays and raises ``ValueError``, these read
user files and raise :class:`InputError`, whose one-line message names the file and the 1-based line.

Common to the line-based formats (RANKS, TRAIN, two-column tables): blank lines and lines starting with ``#``
are skipped; a line is split on tabs, or on whitespace when it has no tab (names may then not hold spaces).

    RANKS.tsv   head relation tail side rank num_candidates   (optional header line: side column ``side``)
                side: ``head`` (the answer is the head entity) or ``tail``; rank may be fractional (ties);
                num_candidates = |E_i| >= 1 and 1 <= rank <= num_candidates.
    TRAIN.txt   h r t
"""
from __future__ import annotations

import argparse
import csv
import importlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from evaluation.core.micro import CATEGORIES, SIDE_NAMES
from evaluation.core.trec import MAX_FIELD_CHARS
from pooling.engine import userfiles  # Django-free: regular files only, bounded lines

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["InputError", "RankFile", "read_ranks", "read_triples", "read_two_columns", "read_metric_table",
           "finite_number"]

T = TypeVar("T")
MAX_CANDIDATES = 2**53  # counts above this are not exact as floats (and overflow int64 soon after)
RANK_COLUMNS = ("head", "relation", "tail", "side", "rank", "num_candidates")


class InputError(Exception):
    """A user-facing input problem; ``str()`` is ``PATH:LINE: message`` (``PATH: message`` without a line,
    just ``message`` when no file is involved, e.g. a missing option)."""

    def __init__(self, path: str | Path | None, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        location = "" if path is None else f"{path}:" if line is None else f"{path}:{line}:"
        super().__init__(f"{location} {message}" if location else message)


def _lines(path: str | Path, field_separators: bytes = b" \t\r\n") -> list[str]:
    """The file's lines without line endings. Decoded in one go (fast on big rank files); a decoding error
    still names its line, counted like an editor does (``\\n`` only)."""
    try:
        data = userfiles.read_bytes(path)  # a FIFO or /dev/zero is refused, not read forever
        userfiles.check_line_lengths(path, data)
        userfiles.check_field_lengths(path, data, MAX_FIELD_CHARS, "names and values", separators=field_separators)
    except userfiles.UserFileError as error:
        message = "No such file or directory" if error.message == "file not found" else error.message
        raise InputError(path, error.line, f"cannot read file: {message}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(path, data.count(b"\n", 0, error.start) + 1, "not valid UTF-8 text") from None
    return [line.rstrip("\r") for line in text.split("\n")]


def _records(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, stripped fields) of every non-blank, non-comment line."""
    for number, text in enumerate(_lines(path), start=1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        # Tabs when present, so tab-separated names may contain spaces; whitespace otherwise.
        yield number, [field.strip() for field in (text.split("\t") if "\t" in text else text.split())]


@dataclass(frozen=True)
class RankFile:
    """One entry per ranked query (the 2|T| head/tail questions), every column as an array."""

    head: np.ndarray  # object (str)
    relation: np.ndarray  # object (str)
    tail: np.ndarray  # object (str)
    side: np.ndarray  # int64: 0 = head question (the answer is the head), 1 = tail; as evaluation.core.micro
    rank: np.ndarray  # float64, 1 <= rank <= num_candidates, fractional for ties
    num_candidates: np.ndarray  # int64 >= 1

    def __len__(self) -> int:
        return len(self.rank)

    @property
    def answers(self) -> np.ndarray:
        """The answer entity of every query (the head on head questions, the tail on tail ones)."""
        return np.where(self.side == 0, self.head, self.tail)

    @cached_property
    def _relation_factors(self) -> tuple[np.ndarray, np.ndarray]:
        names, codes = np.unique(self.relation, return_inverse=True)
        return names, codes.astype(np.int64).reshape(-1)

    @property
    def relation_names(self) -> np.ndarray:
        """Distinct relation names, sorted; ``relation_names[relation_codes] == relation``."""
        return self._relation_factors[0]

    @property
    def relation_codes(self) -> np.ndarray:
        """int64 index of every query's relation into :attr:`relation_names`."""
        return self._relation_factors[1]


def read_ranks(path: str | Path) -> RankFile:
    """Read RANKS.tsv (see the module docstring); the first data line may be a header (side column ``side``)."""
    rows: list[list[str]] = []
    ranks: list[float] = []
    candidates: list[int] = []
    for number, fields in _records(path):
        if len(fields) != 6:
            raise InputError(path, number, f"expected 6 columns ({' '.join(RANK_COLUMNS)}), got {len(fields)}")
        head, relation, tail, side, rank_text, candidates_text = fields
        if side == "side" and not rows:  # header line
            continue
        if side not in SIDE_NAMES:
            raise InputError(path, number, f"side must be 'head' or 'tail', got {side!r}")
        try:
            rank = float(rank_text)
        except ValueError:
            raise InputError(path, number, f"rank is not a number: {rank_text!r}") from None
        try:
            count = float(candidates_text)  # float first: "1e3" / "10.0" as written by some tools are fine
        except ValueError:
            raise InputError(path, number, f"num_candidates is not a number: {candidates_text!r}") from None
        if not math.isfinite(count) or count != int(count) or count < 1:
            raise InputError(path, number, f"num_candidates must be a positive integer, got {candidates_text!r}")
        if count > MAX_CANDIDATES:
            raise InputError(path, number, f"num_candidates {candidates_text[:40]!r} is too large (at most 2**53)")
        if not 1 <= rank <= count:  # also rejects nan
            raise InputError(path, number, f"rank must be between 1 and num_candidates ({int(count)}), "
                                           f"got {rank_text}")
        rows.append([head, relation, tail, side])
        ranks.append(rank)
        candidates.append(int(count))
    if not rows:
        raise InputError(path, None, "no ranked queries")
    names = np.array(rows, dtype=object)
    return RankFile(head=names[:, 0], relation=names[:, 1], tail=names[:, 2],
                    side=(names[:, 3] == SIDE_NAMES[1]).astype(np.int64),
                    rank=np.array(ranks, dtype=np.float64), num_candidates=np.array(candidates, dtype=np.int64))


def read_triples(path: str | Path) -> list[tuple[str, str, str]]:
    """Read a TRAIN file: ``h r t`` per line."""
    triples: list[tuple[str, str, str]] = []
    for number, fields in _records(path):
        if len(fields) != 3:
            raise InputError(path, number, f"expected 3 columns (h r t), got {len(fields)}")
        triples.append((fields[0], fields[1], fields[2]))
    return triples


def read_two_columns(path: str | Path, what: str, parse: Callable[[str], T] = str) -> dict[str, T]:
    """``relation WHAT`` per line -> {relation: parse(WHAT)}; a later line for the same relation wins."""
    table: dict[str, T] = {}
    for number, fields in _records(path):
        if len(fields) != 2:
            raise InputError(path, number, f"expected 'relation {what}', got {len(fields)} columns")
        try:
            table[fields[0]] = parse(fields[1])
        except ValueError as error:
            reason = f" ({error})" if parse is finite_number else ""
            raise InputError(path, number, f"bad {what}: {userfiles.shown(fields[1])}{reason}") from None
    return table


def finite_number(text: str) -> float:
    """A float that is neither infinite nor NaN (``float`` alone takes ``inf`` and ``nan``); ValueError else."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not finite")
    return value


def read_metric_table(path: str | Path) -> pd.DataFrame:
    """CSV: header ``system,metric...``, one row per system, numeric values."""
    import pandas as pd  # lazy: only kendall needs it

    rows = csv.reader(_lines(path, b" \t\r\n,"))  # csv.reader counts one row per line here: no quoted newlines in tables
    try:
        numbered = [(number, row) for number, row in enumerate(rows, start=1) if any(c.strip() for c in row)]
    except csv.Error as error:  # e.g. a lone \r inside a line
        raise InputError(path, rows.line_num, f"not a CSV row: {error}") from None
    if not numbered:
        raise InputError(path, None, "empty table")
    header_line, header = numbered[0]
    metrics = [name.strip() for name in header[1:]]
    if not metrics:
        raise InputError(path, header_line, "the header needs a system column and at least one metric column")
    if len(set(metrics)) != len(metrics):
        raise InputError(path, header_line, "duplicate metric name in the header")
    systems: list[str] = []
    seen: set[str] = set()
    values: list[list[float]] = []
    for number, row in numbered[1:]:
        if len(row) != len(header):
            raise InputError(path, number, f"expected {len(header)} columns, got {len(row)}")
        system = row[0].strip()
        if system in seen:
            raise InputError(path, number, f"duplicate system {userfiles.shown(system)}")
        seen.add(system)
        values.append([])
        for cell in row[1:]:
            try:
                values[-1].append(finite_number(cell))
            except ValueError as error:  # inf / nan would make every tau meaningless
                raise InputError(path, number, f"value is {error}: {userfiles.shown(cell)}") from None
        systems.append(system)
    return pd.DataFrame(values, index=pd.Index(systems, name="system"), columns=metrics)


def relation_categories(args: argparse.Namespace, relation_names: np.ndarray) -> np.ndarray:
    """The category (1-1, 1-N, N-1, N-N) of each named relation, from ``--categories FILE`` or computed from
    ``--train``: the command-line subcommands' ``--by category``."""
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
    bad = [c for c in categories if c not in CATEGORIES]
    if bad:
        raise InputError(source, None, f"unknown relation category {bad[0]!r}; expected one of {CATEGORIES}")
    return categories
