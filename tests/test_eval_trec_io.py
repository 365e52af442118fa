"""Reading and writing TREC qrels / run files, and the errors for malformed ones."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.core.trec import (
    TrecFormatError, read_qrels, read_run, write_qrels, write_run,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_run_round_trip_reorders_by_trec_eval_ranking(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_run(path, ["q2", "q1", "q1", "q1"], ["x", "a", "b", "c"], [0.5, 0.1, 0.9, 0.9], tag="sys")
    lines = [line.split() for line in path.read_text().splitlines()]
    # q1: b and c tie at 0.9 -> c (higher docid) first; then a. Ranks restart per query.
    assert [(l[0], l[2], l[3]) for l in lines] == [("q1", "c", "1"), ("q1", "b", "2"), ("q1", "a", "3"),
                                                   ("q2", "x", "1")]
    assert all(l[1] == "Q0" and l[5] == "sys" for l in lines)
    run = read_run(path)
    assert run.tag == "sys" and len(run) == 4
    pairs = {(run.query_names[q], run.doc_names[d], s) for q, d, s in zip(run.query, run.doc, run.score)}
    assert pairs == {("q2", "x", 0.5), ("q1", "a", 0.1), ("q1", "b", 0.9), ("q1", "c", 0.9)}


def test_qrels_round_trip_and_sorted_vocabularies(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    write_qrels(path, ["q2", "q1", "q1"], ["d9", "d10", "d2"], [1, 0, 2])
    assert path.read_text().splitlines()[0] == "q2 0 d9 1"
    qrels = read_qrels(path)
    assert list(qrels.query_names) == ["q1", "q2"]
    assert list(qrels.doc_names) == ["d10", "d2", "d9"]  # string order
    triples = {(qrels.query_names[q], qrels.doc_names[d], r)
               for q, d, r in zip(qrels.query, qrels.doc, qrels.relevance)}
    assert triples == {("q2", "d9", 1), ("q1", "d10", 0), ("q1", "d2", 2)}


def test_comments_blank_lines_and_tabs_are_accepted(tmp_path: Path) -> None:
    plain = read_qrels(write(tmp_path / "a.txt", "q1 0 d1 1\nq1 0 d2 0\n"))
    commented = read_qrels(write(tmp_path / "b.txt", "# judged by two people\n\nq1\t0\td1\t1\n  q1 0  d2 0\n"))
    for field in ("query", "doc", "relevance"):
        np.testing.assert_array_equal(getattr(plain, field), getattr(commented, field))
    assert list(plain.doc_names) == list(commented.doc_names)


def test_numeric_looking_ids_stay_strings(tmp_path: Path) -> None:
    qrels = read_qrels(write(tmp_path / "q.txt", "007 0 0042 1\n"))
    assert qrels.query_names[0] == "007" and qrels.doc_names[0] == "0042"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3\n", 3, "expected 4 columns"),
        ("q1 0 d1 1\nq1 0 d2 yes\n", 2, "not an integer"),
        ("q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "expected 4 columns"),
        ("q1 0 d1 1\n\nq1 0 d2 0\nq1 0 d1 0\n", 4, "judged twice"),
    ],
)
def test_bad_qrels_name_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "qrels.txt", text)
    with pytest.raises(TrecFormatError) as error:
        read_qrels(path)
    assert error.value.line_number == line
    assert str(error.value).startswith(f"{path}:{line}: ")
    assert fragment in str(error.value)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 abc t\n", 2, "not a number"),
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", 2, "expected 6 columns"),
        ("q1 Q0 d1 1 0.5 t x\nq1 Q0 d2 2 0.4\n", 2, "expected 6 columns"),  # counts compensate
        ("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\nq1 Q0 d1 3 0.3 t\n", 4, "retrieved twice"),
    ],
)
def test_bad_run_names_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = write(tmp_path / "run.txt", text)
    with pytest.raises(TrecFormatError) as error:
        read_run(path)
    assert error.value.line_number == line and fragment in str(error.value)
    assert str(error.value).startswith(f"{path}:{line}: ")


def test_duplicate_found_late_in_a_large_file(tmp_path: Path) -> None:
    lines = [f"q{i // 100} Q0 d{i % 100} {i % 100 + 1} {1 - (i % 100) / 100} t" for i in range(5000)]
    lines.append("q7 Q0 d3 101 0.0 t")  # duplicate of an earlier line
    path = write(tmp_path / "run.txt", "\n".join(lines) + "\n")
    with pytest.raises(TrecFormatError) as error:
        read_run(path)
    assert error.value.line_number == 5001
    assert "first on line 704" in str(error.value)


def test_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError, match="cannot read"):
        read_run(tmp_path / "nope.txt")


def test_fast_and_careful_readers_agree(tmp_path: Path) -> None:
    # Same content, one file with a comment (line-by-line reader), one without (pandas reader).
    rng = np.random.default_rng(0)
    lines = [f"{q:03d} Q0 {d:04d} {k} {rng.random():.6f} sys" for q in range(20)
             for k, d in enumerate(rng.choice(500, size=30, replace=False), start=1)]
    fast = read_run(write(tmp_path / "fast.txt", "\n".join(lines) + "\n"))
    careful = read_run(write(tmp_path / "careful.txt", "# header\n" + "\n".join(lines) + "\n"))
    for field in ("query_names", "doc_names", "query", "doc", "score"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(careful, field))
    assert all(len(name) == 4 for name in fast.doc_names)  # zero-padded numeric ids stay strings
    assert fast.tag == careful.tag == "sys"


def test_binary_garbage_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\n")
    with pytest.raises(TrecFormatError) as error:
        read_qrels(path)
    assert error.value.line_number == 2 and "UTF-8" in str(error.value)


@pytest.mark.parametrize("text", ["q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t extra\n",
                                  "q1\tQ0\td1\t1\t0.5\tt\tx y\nq1 Q0 d2 2 0.4 t\n"])
def test_fields_after_the_run_tag_are_ignored_as_trec_eval_does(tmp_path: Path, text: str) -> None:
    # trec_eval's get_trec_results.c: "Any field following run_id is ignored" (its test/results.trunc).
    run = read_run(write(tmp_path / "run.txt", text))
    assert sorted(run.doc_names) == ["d1", "d2"] and sorted(run.score) == [0.4, 0.5]
