"""Which reader reads a TREC file (issue 19): pandas' C parser for every plain file, single spaced or not, the
line scan only for what it cannot take (comments, CR, a short or long line, a duplicate, non-numeric values),
and both give the same Qrels / Run. The scan is replaced by a failing stub to prove it was not used."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.core import trec

RUN_TEXTS = {
    "single spaced": b"q1 Q0 d2 1 0.9 sys\nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
    "no final newline": b"q1 Q0 d2 1 0.9 sys\nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys",
    "tabs": b"q1\tQ0\td2\t1\t0.9\tsys\nq1\tQ0\td1\t2\t0.5\tsys\nq2\tQ0\t007\t1\t3\tsys\n",
    "double spaces": b"q1  Q0 d2 1 0.9 sys\nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
    "blank line": b"q1 Q0 d2 1 0.9 sys\n\nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
    "leading space": b" q1 Q0 d2 1 0.9 sys\nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
    "leading space later": b"q1 Q0 d2 1 0.9 sys\n q1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
    "trailing space": b"q1 Q0 d2 1 0.9 sys \nq1 Q0 d1 2 0.5 sys\nq2 Q0 007 1 3 sys\n",
}
QRELS_TEXTS = {
    "single spaced": b"q1 0 d2 1\nq1 0 d1 0\nq2 0 007 2\n",
    "tabs": b"q1\t0\td2\t1\nq1\t0\td1\t0\nq2\t0\t007\t2\n",
    "double spaces": b"q1 0  d2 1\nq1 0 d1 0\nq2 0 007 2\n",
}
NEEDS_SCAN_RUN = {
    # comments of 6 fields: pandas would read them as a query "#"
    "comment": b"# Q0 d 1 0.9 sys\nq1 Q0 d2 1 0.9 sys\n",
    "comment later": b"q1 Q0 d2 1 0.9 sys\n# Q0 d 1 0.9 sys\n",
    "comment, tabs": b"#\tQ0\td\t1\t0.9\tsys\nq1\tQ0\td2\t1\t0.9\tsys\n",
    "CRLF": b"q1 Q0 d2 1 0.9 sys\r\n",
    "extra field": b"q1 Q0 d2 1 0.9 sys x\nq1 Q0 d1 2 0.5 sys\n",
    "extra field, tabs": b"q1\tQ0\td2\t1\t0.9\tsys\tx\nq1\tQ0\td1\t2\t0.5\tsys\n",
    "textual score": b"q1 Q0 d2 1 True sys\n",
}


def fields(record) -> dict:
    return {name: np.asarray(getattr(record, name)).tolist() for name in ("query_names", "doc_names", "query", "doc")}


def no_scan(monkeypatch):
    def fail(path, data):
        raise AssertionError("the line scan was used")
    monkeypatch.setattr(trec, "_scan_run", fail)
    monkeypatch.setattr(trec, "_scan_qrels", fail)


@pytest.mark.parametrize("name", RUN_TEXTS)
def test_plain_runs_take_the_fast_path_and_equal_the_scan(monkeypatch, name):
    expected = trec._scan_run(Path("r.txt"), RUN_TEXTS[name])
    no_scan(monkeypatch)
    run = trec.read_run("r.txt", RUN_TEXTS[name])
    assert fields(run) == fields(expected)
    assert run.score.tolist() == expected.score.tolist() and run.tag == expected.tag == "sys"
    assert run.query_names.tolist() == ["q1", "q2"] and run.doc_names.tolist() == ["007", "d1", "d2"]


@pytest.mark.parametrize("name", QRELS_TEXTS)
def test_plain_qrels_take_the_fast_path_and_equal_the_scan(monkeypatch, name):
    expected = trec._scan_qrels(Path("q.txt"), QRELS_TEXTS[name])
    no_scan(monkeypatch)
    qrels = trec.read_qrels("q.txt", QRELS_TEXTS[name])
    assert fields(qrels) == fields(expected)
    assert qrels.relevance.tolist() == expected.relevance.tolist()
    assert sorted(zip(qrels.doc_names[qrels.doc].tolist(), qrels.relevance.tolist())) == [
        ("007", 2), ("d1", 0), ("d2", 1)]


@pytest.mark.parametrize("name", NEEDS_SCAN_RUN)
def test_what_the_fast_path_cannot_take_goes_to_the_scan(monkeypatch, name):
    calls = []
    scan = trec._scan_run
    monkeypatch.setattr(trec, "_scan_run", lambda path, data: calls.append(path) or scan(path, data))
    try:
        trec.read_run("r.txt", NEEDS_SCAN_RUN[name])
    except trec.TrecFormatError:
        pass
    assert calls == [Path("r.txt")]


def test_duplicates_found_by_the_fast_path_are_named_by_the_scan(monkeypatch):
    calls = []
    scan = trec._scan_qrels
    monkeypatch.setattr(trec, "_scan_qrels", lambda path, data: calls.append(path) or scan(path, data))
    with pytest.raises(trec.TrecFormatError):
        trec.read_qrels("q.txt", b"q1 0 d1 1\nq1 0 d1 0\n")
    assert calls == [Path("q.txt")]


def test_fractional_relevance_goes_to_the_scan(monkeypatch):
    calls = []
    scan = trec._scan_qrels
    monkeypatch.setattr(trec, "_scan_qrels", lambda path, data: calls.append(path) or scan(path, data))
    assert trec.read_qrels("q.txt", b"q1 0 d1 1.5\n").relevance.tolist() == [1]
    assert len(calls) == 1
