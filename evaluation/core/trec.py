"""TREC qrels / run files: reading, writing, and conversion to a :class:`JudgedRanking`.

Formats (whitespace separated, one judgment / retrieved document per line; blank lines and lines
starting with ``#`` are skipped):

- qrels: ``qid iter docid rel`` (iter ignored; rel read as C's ``atol`` reads it, as trec_eval does:
  ``1.5`` is 1, ``-0.5`` is 0; a rel that does not start with a number is an error);
- run:   ``qid Q0 docid rank score tag [anything]`` (Q0, rank and fields after the tag ignored, score a
  float, ``nan`` and ``inf`` included); the run tag is the last line's, as trec_eval reports it.

Conversion follows trec_eval: a query's documents are ordered by score descending, ties broken by
docid in *descending* string order (the file's rank column is ignored); queries evaluated are those in
both files (``complete=True``: every qrels query, as ``trec_eval -c``).

Reading is vectorised (pandas' C parser); when the fast path sees anything wrong it re-reads the file
line by line to raise a :class:`TrecFormatError` naming the file and the 1-based line.

Files are read as the importers read theirs (:mod:`pooling.engine.userfiles`): regular files only (a FIFO,
``/dev/zero`` or a directory is refused without blocking), lines of at most 1 MiB, fields (qid, docid, tag,
...) of at most :data:`MAX_FIELD_CHARS` characters, strict UTF-8; all checked before anything is parsed.
"""
from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from itertools import chain
from operator import methodcaller
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np
import pandas as pd

from evaluation.core._util import (
    codes_in_name_order, glibc_merge_sort, group_rows_by_query, has_duplicate_pairs, lexicographic_codes,
    match_judgments, offsets_from_counts, trec_order_violations,
)
from evaluation.core.judged_ranking import JudgedRanking
from pooling.engine import userfiles  # Django-free: regular files only, bounded lines and fields

#: Longest qid / docid / tag (any whitespace-separated field) read from a file, in characters: far above any
#: real id (URLs as docids included), low enough that no id costs much memory.
MAX_FIELD_CHARS = 4096


class TrecFormatError(ValueError):
    """Malformed TREC file; ``str()`` is ``path:line: message``."""

    def __init__(self, path: str | Path, line_number: int | None, message: str) -> None:
        self.path = str(path)
        self.line_number = line_number
        self.message = message
        where = self.path if line_number is None else f"{self.path}:{line_number}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Qrels:
    """Judgments with integer codes; ``query_names`` / ``doc_names`` are sorted (code order = name order)."""

    query_names: np.ndarray
    doc_names: np.ndarray
    query: np.ndarray
    doc: np.ndarray
    relevance: np.ndarray

    def __len__(self) -> int:
        return len(self.query)

    @classmethod
    def from_columns(cls, query, doc, relevance) -> "Qrels":
        """From parallel sequences of qid strings, docid strings and integer labels."""
        query_codes, query_names = lexicographic_codes(np.asarray(query, dtype=object))
        doc_codes, doc_names = lexicographic_codes(np.asarray(doc, dtype=object))
        return cls(query_names, doc_names, query_codes, doc_codes, np.asarray(relevance, dtype=np.int64))

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> "Qrels":
        """From pytrec_eval's ``{qid: {docid: rel}}``."""
        query_codes, query_names, doc, rel = _flatten_nested(qrels, np.int64)
        doc_codes, doc_names = lexicographic_codes(doc)
        return cls(query_names, doc_names, query_codes, doc_codes, rel)


def _flatten_nested(nested: Mapping[str, Mapping[str, object]], dtype
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """{qid: {docid: value}} -> query codes, sorted query names, doc strings, values.

    Iterates with C-level helpers (chain, map) and encodes each query name once, not per row.
    """
    inner = list(nested.values())
    counts = np.fromiter(map(len, inner), np.int64, len(inner))
    total = int(counts.sum())
    names_codes, query_names = lexicographic_codes(np.array(list(nested), dtype=object))
    query_codes = np.repeat(names_codes, counts)
    doc = np.fromiter(chain.from_iterable(inner), dtype=object, count=total)
    values = np.fromiter(chain.from_iterable(map(methodcaller("values"), inner)), dtype=dtype, count=total)
    return query_codes, query_names, doc, values


@dataclass(frozen=True)
class Run:
    """A run with integer codes; ``query_names`` / ``doc_names`` are sorted (code order = name order)."""

    query_names: np.ndarray
    doc_names: np.ndarray
    query: np.ndarray
    doc: np.ndarray
    score: np.ndarray
    tag: str = "run"

    def __len__(self) -> int:
        return len(self.query)

    @classmethod
    def from_columns(cls, query, doc, score, tag: str = "run") -> "Run":
        """From parallel sequences of qid strings, docid strings and scores (no duplicate check)."""
        query_codes, query_names = lexicographic_codes(np.asarray(query, dtype=object))
        doc_codes, doc_names = lexicographic_codes(np.asarray(doc, dtype=object))
        return cls(query_names, doc_names, query_codes, doc_codes,
                   np.asarray(score, dtype=np.float64), tag)

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], tag: str = "run") -> "Run":
        """From pytrec_eval's ``{qid: {docid: score}}``."""
        query_codes, query_names, doc, score = _flatten_nested(run, np.float64)
        doc_codes, doc_names = lexicographic_codes(doc)
        return cls(query_names, doc_names, query_codes, doc_codes, score, tag)

    def has_duplicates(self) -> bool:
        """Whether some query retrieves the same document twice (trec_eval refuses such runs)."""
        return has_duplicate_pairs(self.query, self.doc, len(self.doc_names))


# ---------------------------------------------------------------------- reading
_SEPARATORS = re.compile(r"[ \t\r]+")


def _lines(path: Path, data: bytes) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, whitespace-separated fields) of every non-blank, non-comment line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise TrecFormatError(path, line, "not valid UTF-8 text") from None
    for number, raw in enumerate(text.split("\n"), start=1):
        # fields are separated by spaces and tabs only (\r: CRLF files), as trec_eval and the fast path read
        # them; str.split() would also split on \x0b, \x1c, \xa0... and refuse ids the fast path accepts
        fields = [field for field in _SEPARATORS.split(raw) if field]
        if fields and not fields[0].startswith("#"):
            yield number, fields


def _scan_qrels(path: Path, data: bytes) -> Qrels:
    """Line-by-line reader: slow, but names the exact line of the first problem."""
    query, doc, rel = [], [], []
    seen: dict[tuple[str, str], int] = {}
    for number, fields in _lines(path, data):
        if len(fields) != 4:
            raise TrecFormatError(path, number, f"expected 4 columns 'qid iter docid rel', got {len(fields)}")
        value = relevance_value(fields[3])
        if value is None:
            raise TrecFormatError(path, number, f"relevance {fields[3]!r} is not an integer") from None
        if abs(value) > MAX_RELEVANCE:
            raise TrecFormatError(path, number, f"relevance {fields[3]} is beyond +-{MAX_RELEVANCE:,}: relevance "
                                                "levels are small integers (a gain table has one entry per level)")
        key = (fields[0], fields[2])
        if key in seen:
            raise TrecFormatError(path, number, f"document {fields[2]!r} judged twice for query "
                                                f"{fields[0]!r} (first on line {seen[key]})")
        seen[key] = number
        query.append(fields[0])
        doc.append(fields[2])
        rel.append(value)
    return Qrels.from_columns(np.array(query, dtype=object), np.array(doc, dtype=object),
                              np.array(rel, dtype=np.int64))


def _scan_run(path: Path, data: bytes) -> Run:
    query, doc, score = [], [], []
    tag = None
    seen: dict[tuple[str, str], int] = {}
    for number, fields in _lines(path, data):
        if len(fields) < 6:  # trec_eval ignores fields after the tag
            raise TrecFormatError(path, number,
                                  f"expected 6 columns 'qid Q0 docid rank score tag', got {len(fields)}")
        try:
            value = float(fields[4])
        except ValueError:
            raise TrecFormatError(path, number, f"score {fields[4]!r} is not a number") from None
        key = (fields[0], fields[2])
        if key in seen:
            raise TrecFormatError(path, number, f"document {fields[2]!r} retrieved twice for query "
                                                f"{fields[0]!r} (first on line {seen[key]})")
        seen[key] = number
        query.append(fields[0])
        doc.append(fields[2])
        score.append(value)
        tag = fields[5]
    return Run.from_columns(np.array(query, dtype=object), np.array(doc, dtype=object),
                            np.array(score, dtype=np.float64), tag or "run")


def _read_bytes(path: Path) -> bytes:
    """A regular file's bytes (a FIFO, a device or a directory is refused without being read)."""
    try:
        return userfiles.read_bytes(path)
    except userfiles.UserFileError as error:
        message = "No such file or directory" if error.message == "file not found" else error.message
        raise TrecFormatError(path, None, f"cannot read file: {message}") from None


_BOM = b"\xef\xbb\xbf"


def _checked(path: Path, data: bytes) -> bytes:
    """``data`` when its lines and fields are within the limits, else TrecFormatError naming the line. A UTF-8 byte
    order mark (Windows editors write one) is no part of the first qid: both readers leave it out (pandas' did,
    the line scanner kept it, so a CRLF or commented file with one lost its first line's judgment; trec_eval
    reads it as part of the qid)."""
    data = data.removeprefix(_BOM)
    try:
        userfiles.check_line_lengths(path, data)
        userfiles.check_field_lengths(path, data, MAX_FIELD_CHARS, "qids, docids and tags")
    except userfiles.UserFileError as error:
        raise TrecFormatError(path, error.line, error.message) from None
    return data


def _fast_table(data: bytes, num_columns: int, numeric_column: int) -> pd.DataFrame | None:
    """pandas' C parser on a comment-free file, or None when the file needs the careful scan.

    qid / docid / tag columns are parsed straight into categoricals (no Python object per row);
    pandas turns all-numeric categories into numbers ('007' -> 7), so then they are re-read as
    strings. Single-space separated files (what most tools write) skip the ignored columns: the
    field count of every line is then checked by counting spaces instead.
    """
    if data.startswith(b"#") or b"\n#" in data or b"\r" in data:
        return None
    single_spaced = not data.startswith(b" ") and not any(
        pattern in data for pattern in (b"\t", b"  ", b"\n ", b" \n", b"\n\n"))
    usecols = None
    if single_spaced:
        num_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        if data.count(b" ") != (num_columns - 1) * num_lines:
            return None  # some line has a wrong number of fields
        usecols = [0, 2, numeric_column, num_columns - 1]  # qid, docid, value, last (short-line check)
    columns = usecols or list(range(num_columns))
    string_columns = [column for column in columns if column != numeric_column]

    def parse(dtype) -> pd.DataFrame:
        return pd.read_csv(io.BytesIO(data), sep=" " if single_spaced else r"\s+", header=None,
                           names=list(range(num_columns)), usecols=usecols, index_col=False,
                           dtype={column: dtype for column in string_columns}, na_filter=False,
                           engine="c", skip_blank_lines=True)

    try:
        with warnings.catch_warnings():
            # pandas only warns when the first line has too many fields: make that an error.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = parse("category")
            if not all(pd.api.types.is_string_dtype(table[c].cat.categories) for c in (0, 2)):  # qid, docid
                table = parse(str).astype({column: "category" for column in string_columns})
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError):
        return None
    if "" in set(table[string_columns[-1]].cat.categories.astype(str)):
        return None  # a short line: its trailing fields are missing
    return table


def _categorical_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes in lexicographic order of the category names, and the sorted names."""
    return codes_in_name_order(column.cat.codes.to_numpy(), np.asarray(column.cat.categories, dtype=object))


_RELEVANCE = re.compile(r"[+-]?(\d+)?")


#: the largest relevance level read (and the most negative): the measures build tables with one entry per level,
#: so 3,000,000,000 took all memory (and trec_eval allocates the same); a level beyond it names its line instead
MAX_RELEVANCE = 1_000_000


def relevance_value(text: str) -> int | None:
    """A qrels relevance as trec_eval's ``atol`` reads it (``2.9`` is 2, ``1e+8`` is 1, ``.5`` is 0), or
    None when the field does not start with a number (trec_eval would silently read 0)."""
    match = _RELEVANCE.match(text)
    digits = match.group(1)
    if digits is None and not re.match(r"[+-]?\.\d", text):
        return None
    return int(match.group(0)) if digits is not None else 0


def read_qrels(path: str | Path, data: bytes | None = None) -> Qrels:
    """Read a qrels file (``qid iter docid rel``); ``data`` instead of the file's content (then ``path``
    only names it in errors). Raises TrecFormatError."""
    path = Path(path)
    data = _checked(path, _read_bytes(path) if data is None else data)
    table = _fast_table(data, 4, numeric_column=3)
    if table is None or not pd.api.types.is_integer_dtype(table[3]) or table[3].abs().max() > MAX_RELEVANCE:
        return _scan_qrels(path, data)  # it names the line at fault
    query, query_names = _categorical_codes(table[0])
    doc, doc_names = _categorical_codes(table[2])
    if has_duplicate_pairs(query, doc, len(doc_names)):
        return _scan_qrels(path, data)  # raises with the line number
    return Qrels(query_names, doc_names, query, doc, table[3].to_numpy(np.int64))


def read_run(path: str | Path, data: bytes | None = None) -> Run:
    """Read a run file (``qid Q0 docid rank score tag``); ``data`` instead of the file's content (e.g.
    stdin; then ``path`` only names it in errors). Raises TrecFormatError."""
    path = Path(path)
    data = _checked(path, _read_bytes(path) if data is None else data)
    table = _fast_table(data, 6, numeric_column=4)
    if (table is None or not pd.api.types.is_numeric_dtype(table[4])
            or pd.api.types.is_bool_dtype(table[4])):
        return _scan_run(path, data)
    query, query_names = _categorical_codes(table[0])
    doc, doc_names = _categorical_codes(table[2])
    tag = str(table[5].iloc[-1]) if len(table) else "run"
    run = Run(query_names, doc_names, query, doc, table[4].to_numpy(np.float64), tag)
    if run.has_duplicates():
        return _scan_run(path, data)  # raises with the line number
    return run


# ---------------------------------------------------------------------- writing
def write_qrels(path: str | Path, query, doc, relevance) -> None:
    """Write ``qid 0 docid rel`` lines in the given order."""
    frame = pd.DataFrame({"q": np.asarray(query, dtype=object), "i": "0",
                          "d": np.asarray(doc, dtype=object), "r": np.asarray(relevance, dtype=np.int64)})
    frame.to_csv(path, sep=" ", header=False, index=False)


def write_run(path: str | Path, query, doc, score, tag: str = "run") -> None:
    """Write ``qid Q0 docid rank score tag`` lines; rank = trec_eval's order within the query."""
    query = np.asarray(query, dtype=object)
    doc = np.asarray(doc, dtype=object)
    score = np.asarray(score, dtype=np.float64)
    query_codes, _ = lexicographic_codes(query)
    doc_codes, _ = lexicographic_codes(doc)
    order = np.lexsort((-doc_codes, -score, query_codes))
    sorted_queries = query_codes[order]
    starts = offsets_from_counts(np.bincount(sorted_queries))
    rank = np.arange(len(order)) - starts[sorted_queries] + 1
    frame = pd.DataFrame({"q": query[order], "z": "Q0", "d": doc[order], "k": rank,
                          "s": score[order], "t": tag})
    frame.to_csv(path, sep=" ", header=False, index=False, float_format="%.17g")


# ---------------------------------------------------------------------- conversion
def _trec_ordered_segments(
    query: np.ndarray, doc: np.ndarray, score: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows grouped by query and in trec_eval order within each query, without a full sort.

    Run files and dicts normally list a query's documents together and by descending score, so
    grouping and order are checked in O(n) and only the offending part is sorted. Returns
    (query, doc, segment offsets, query of each segment).
    """
    order, offsets, segment_query = group_rows_by_query(query)
    if order is not None:
        query, doc, score = query[order], doc[order], score[order]
    starts = offsets[:-1]
    is_start = np.zeros(len(query), dtype=bool)
    is_start[starts] = True
    bad_rows = trec_order_violations(is_start, score, doc)
    nan_rows = np.flatnonzero(np.isnan(score))
    if len(bad_rows) or len(nan_rows):
        segment = np.cumsum(is_start) - 1
        nan_segment = np.zeros(len(starts), dtype=bool)
        nan_segment[segment[nan_rows]] = True
        bad_segment = np.zeros(len(starts), dtype=bool)
        bad_segment[segment[bad_rows]] = True
        bad_segment &= ~nan_segment
        rows = np.flatnonzero(bad_segment[segment])
        order = np.lexsort((-doc[rows], -score[rows], segment[rows]))
        doc = doc.copy()
        doc[rows] = doc[rows[order]]  # sorting within segments keeps every row in its segment
        for index in np.flatnonzero(nan_segment):
            rows = np.arange(offsets[index], offsets[index + 1])
            doc[rows] = _order_with_nan(doc[rows], score[rows])
    return query, doc, offsets, segment_query


def _order_with_nan(doc: np.ndarray, score: np.ndarray) -> np.ndarray:
    """One query's docs in the order trec_eval (built with glibc) gives a ranking with NaN scores.

    A NaN score compares neither higher nor lower than any score, so trec_eval's comparator falls back to
    the docno for it and the order is whatever its qsort -- glibc's merge sort -- makes of the docs it
    reads in docno order. That sort is replayed here (a NaN is not "last" or "first": it sits among
    the others by docno).
    """
    start = np.argsort(doc, kind="stable")

    def compare(a: tuple[float, int], b: tuple[float, int]) -> int:
        if a[0] > b[0]:
            return -1
        if a[0] < b[0]:
            return 1
        return (b[1] > a[1]) - (b[1] < a[1])  # docno descending

    ranked = glibc_merge_sort(list(zip(score[start].tolist(), doc[start].tolist())), compare)
    return np.array([code for _, code in ranked], dtype=doc.dtype)


def _recode(names: np.ndarray, union: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Codes in `names` (sorted, a subset of the sorted `union`) -> codes in `union`."""
    if len(names) == len(union) or len(names) == 0:  # same vocabulary: nothing to do
        return codes
    return np.searchsorted(union, names)[codes]


def judged_ranking_from_trec(
    qrels: Qrels,
    run: Run,
    *,
    complete: bool = False,
    relevance_level: int = 1,
) -> JudgedRanking:
    """trec_eval's view of a run: ranks of its judged documents, query ids in trec_eval order.

    Queries: those in both qrels and run (``complete``: all qrels queries, missing ones retrieve
    nothing). Ordering: score descending, then docid descending. Vectorised end to end.
    """
    query_union = np.union1d(qrels.query_names, run.query_names)
    doc_union = np.union1d(qrels.doc_names, run.doc_names)
    run_query = _recode(run.query_names, query_union, run.query)
    run_doc = _recode(run.doc_names, doc_union, run.doc)
    qrels_query = _recode(qrels.query_names, query_union, qrels.query)
    qrels_doc = _recode(qrels.doc_names, doc_union, qrels.doc)

    in_qrels = np.zeros(len(query_union), bool)
    in_qrels[qrels_query] = True
    in_run = np.zeros(len(query_union), bool)
    in_run[run_query] = True
    evaluated = in_qrels if complete else in_qrels & in_run
    eval_index = np.full(len(query_union), -1, dtype=np.int64)
    eval_index[evaluated] = np.arange(int(evaluated.sum()))
    num_queries = int(evaluated.sum())

    # Avoid full-length passes over the run when every run query is evaluated (the usual case).
    if evaluated.all():
        run_q, run_d, run_s = run_query, run_doc, run.score
    elif evaluated[in_run].all():
        run_q, run_d, run_s = eval_index[run_query], run_doc, run.score
    else:
        keep_run = evaluated[run_query]
        run_q, run_d, run_s = eval_index[run_query[keep_run]], run_doc[keep_run], run.score[keep_run]
    run_q, run_d, offsets, segment_query = _trec_ordered_segments(run_q, run_d, run_s)
    num_ret = np.zeros(num_queries, dtype=np.int64)
    num_ret[segment_query] = np.diff(offsets)

    keep_qrels = evaluated[qrels_query]
    judged_q = eval_index[qrels_query[keep_qrels]]
    judged_d = qrels_doc[keep_qrels]
    # Judgments are matched per run segment; segment s holds query segment_query[s].
    segment_of_query = np.full(num_queries, -1, dtype=np.int64)
    segment_of_query[segment_query] = np.arange(len(segment_query))
    judged_segment = segment_of_query[judged_q]
    judged_in_run = np.flatnonzero(judged_segment >= 0)
    rows, judgments = match_judgments(offsets, run_d, judged_segment[judged_in_run],
                                      judged_d[judged_in_run], len(doc_union))
    rank = np.full(len(judged_q), np.inf)
    rank[judged_in_run[judgments]] = rows - offsets[judged_segment[judged_in_run[judgments]]] + 1.0
    return JudgedRanking.from_judgments(
        num_queries, judged_q, rank, qrels.relevance[keep_qrels], num_ret,
        relevance_level=relevance_level, query_ids=query_union[evaluated],
    )
