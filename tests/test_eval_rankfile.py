"""The shared input readers of ``python -m evaluation`` (:mod:`evaluation.inputs`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.inputs import InputError, read_metric_table, read_ranks, read_triples, read_two_columns

GOOD = (
    "# produced by kgpool rank\n"
    "e0\tr1\te1\thead\t1\t10\n"
    "\n"
    "e2\tr0\te3\ttail\t2.5\t3\n"
    "e4\tr1\te5\ttail\t7\t7\n"
)


def _write(tmp_path: Path, content: str | bytes, name: str = "ranks.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _error(read, path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    return str(caught.value)


def test_good_rank_file_gives_all_columns_as_arrays(tmp_path: Path) -> None:
    ranks = read_ranks(_write(tmp_path, GOOD))
    assert len(ranks) == 3
    assert list(ranks.head) == ["e0", "e2", "e4"] and list(ranks.tail) == ["e1", "e3", "e5"]
    assert list(ranks.relation) == ["r1", "r0", "r1"]
    assert ranks.side.dtype == np.int64 and list(ranks.side) == [0, 1, 1]  # 0 = head, as evaluation.core.micro
    assert ranks.rank.dtype == np.float64 and list(ranks.rank) == [1.0, 2.5, 7.0]
    assert ranks.num_candidates.dtype == np.int64 and list(ranks.num_candidates) == [10, 3, 7]
    assert list(ranks.answers) == ["e0", "e3", "e5"]  # the head on head questions, the tail on tail ones
    assert list(ranks.relation_names) == ["r0", "r1"]
    assert ranks.relation_codes.dtype == np.int64 and list(ranks.relation_codes) == [1, 0, 1]
    assert list(ranks.relation_names[ranks.relation_codes]) == list(ranks.relation)


def test_spaces_instead_of_tabs_and_a_header_line(tmp_path: Path) -> None:
    spaced = "# comment before the header\nhead relation tail side rank num_candidates\n" + GOOD.replace("\t", "  ")
    assert _same(read_ranks(_write(tmp_path, spaced)), read_ranks(_write(tmp_path, GOOD, "tabs.tsv")))
    # With tabs, names may hold spaces (fields are only stripped); CRLF line endings are fine.
    ranks = read_ranks(_write(tmp_path, "New York\tlocated in\tUSA\thead\t1\t2\r\n"))
    assert list(ranks.answers) == ["New York"] and list(ranks.relation) == ["located in"]
    assert list(read_ranks(_write(tmp_path, "a r b head 1 1e3\n")).num_candidates) == [1000]


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, c), getattr(b, c))
               for c in ("head", "relation", "tail", "side", "rank", "num_candidates"))


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("a\tr\tb\thead\t1\n", 1, "expected 6 columns (head relation tail side rank num_candidates), got 5"),
        ("a r b head 1 2 extra\n", 1, "expected 6 columns (head relation tail side rank num_candidates), got 7"),
        (GOOD + "a\tr\tb\tleft\t1\t2\n", 6, "side must be 'head' or 'tail', got 'left'"),
        (GOOD + "a\tr\tb\tside\t1\t2\n", 6, "side must be 'head' or 'tail', got 'side'"),  # header only first
        ("a\tr\tb\thead\tfirst\t2\n", 1, "rank is not a number: 'first'"),
        ("a\tr\tb\thead\t1\tten\n", 1, "num_candidates is not a number: 'ten'"),
        ("a\tr\tb\thead\t1\t0\n", 1, "num_candidates must be a positive integer, got '0'"),
        ("a\tr\tb\thead\t1\t2.5\n", 1, "num_candidates must be a positive integer, got '2.5'"),
        ("a\tr\tb\thead\t1\tinf\n", 1, "num_candidates must be a positive integer, got 'inf'"),
        ("\n\na\tr\tb\thead\t0\t10\n", 3, "rank must be between 1 and num_candidates (10), got 0"),
        ("a\tr\tb\thead\t0.5\t10\n", 1, "rank must be between 1 and num_candidates (10), got 0.5"),
        ("a\tr\tb\ttail\t11\t10\n", 1, "rank must be between 1 and num_candidates (10), got 11"),
        ("a\tr\tb\ttail\tnan\t10\n", 1, "rank must be between 1 and num_candidates (10), got nan"),
    ],
)
def test_each_rank_error_names_its_line(tmp_path: Path, content: str, line: int, message: str) -> None:
    path = _write(tmp_path, content)
    assert _error(read_ranks, path) == f"{path}:{line}: {message}"


def test_utf8_error_names_its_line_and_file_level_errors_have_none(tmp_path: Path) -> None:
    bad = _write(tmp_path, GOOD.encode() + b"caf\xe9\tr\tb\thead\t1\t2\n")
    assert _error(read_ranks, bad) == f"{bad}:6: not valid UTF-8 text"
    empty = _write(tmp_path, "# nothing\nhead relation tail side rank num_candidates\n", "empty.tsv")
    assert _error(read_ranks, empty) == f"{empty}: no ranked queries"
    missing = tmp_path / "missing.tsv"
    assert _error(read_ranks, missing) == f"{missing}: cannot read file: No such file or directory"


def test_triples_tabs_or_spaces_and_bad_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "# train\na\tr\tb c\n\nd s e\n", "train.txt")
    assert read_triples(path) == [("a", "r", "b c"), ("d", "s", "e")]
    bad = _write(tmp_path, "a\tr\tb\nd s\n", "bad.txt")
    assert _error(read_triples, bad) == f"{bad}:2: expected 3 columns (h r t), got 2"


def test_two_columns_parse_and_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "# weights\nr0\t0.5\nr1 2\n", "weights.tsv")
    assert read_two_columns(path, "weight", float) == {"r0": 0.5, "r1": 2.0}
    assert read_two_columns(path, "category") == {"r0": "0.5", "r1": "2"}
    bad = _write(tmp_path, "r0\t0.5\nr1\theavy\n", "bad.tsv")
    assert _error(lambda p: read_two_columns(p, "weight", float), bad) == f"{bad}:2: bad weight: 'heavy'"
    bad = _write(tmp_path, "r0\t1-N\textra\n", "bad.tsv")
    assert _error(lambda p: read_two_columns(p, "category"), bad) == \
        f"{bad}:1: expected 'relation category', got 3 columns"


def test_metric_table_and_its_errors(tmp_path: Path) -> None:
    table = read_metric_table(_write(tmp_path, "system,MRR,MR\nA,0.5,10\n\nB,0.25,20\n", "t.csv"))
    assert list(table.index) == ["A", "B"] and list(table.columns) == ["MRR", "MR"]
    assert table.loc["B", "MR"] == 20.0
    bad = _write(tmp_path, "system,MRR\nA,0.1\n\nB,x\n", "bad.csv")
    assert _error(read_metric_table, bad) == f"{bad}:4: value is not a number: 'x'"
    bad = _write(tmp_path, b"system,MRR\nA,0.1\nB,\xff\n", "bad.csv")
    assert _error(read_metric_table, bad) == f"{bad}:3: not valid UTF-8 text"


def test_input_error_text() -> None:
    assert str(InputError("f.tsv", 3, "bad")) == "f.tsv:3: bad"
    assert str(InputError("f.tsv", None, "bad")) == "f.tsv: bad"
    assert str(InputError(None, None, "--hits must be integers")) == "--hits must be integers"
    assert InputError("f.tsv", 3, "bad").line == 3
