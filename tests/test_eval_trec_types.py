"""The small contracts of evaluation/core/trec.py that the format and measure tests do not pin (issue 19,
written for mutants they let survive): the field-length limit at its exact edge, the error's attributes,
immutable Qrels / Run, and the default run tag."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluation.core import trec
from evaluation.core.trec import MAX_FIELD_CHARS, Qrels, Run, TrecFormatError, read_qrels, read_run
from tests._raises_support import whole


def test_field_limit_is_4096_characters_exactly():
    assert MAX_FIELD_CHARS == 4096
    docid = "d" * 4096
    qrels = read_qrels("q.txt", f"q1 0 {docid} 1\n".encode())
    assert list(qrels.doc_names) == [docid]
    run = read_run("r.txt", f"q1 Q0 {docid} 1 2.5 t\n".encode())
    assert list(run.doc_names) == [docid]
    with pytest.raises(TrecFormatError, match=whole(
            "r.txt:2: a field of 4,097 characters: qids, docids and tags are at most 4096")):
        read_run("r.txt", f"q1 Q0 d 1 2.5 t\nq1 Q0 {docid}x 1 2.5 t\n".encode())


def test_format_error_keeps_path_line_and_message():
    error = TrecFormatError("dir/run.txt", 7, "score 'x' is not a number")
    assert (error.path, error.line_number, error.message) == ("dir/run.txt", 7, "score 'x' is not a number")
    assert str(error) == "dir/run.txt:7: score 'x' is not a number"
    whole_file = TrecFormatError("run.txt", None, "cannot read file: No such file or directory")
    assert (whole_file.line_number, str(whole_file)) == (None, "run.txt: cannot read file: No such file or directory")
    with pytest.raises(TrecFormatError) as raised:
        read_run("bad.txt", b"q1 Q0 d1 1 x t\n")
    assert (raised.value.line_number, raised.value.message) == (1, "score 'x' is not a number")


def test_qrels_and_run_are_immutable():
    qrels = Qrels.from_columns(["q1"], ["d1"], [1])
    run = Run.from_columns(["q1"], ["d1"], [0.5])
    with pytest.raises(dataclasses.FrozenInstanceError):
        qrels.relevance = np.array([0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.tag = "other"


def test_default_run_tag_is_run():
    empty = np.array([], dtype=np.int64)
    assert Run(np.array([], dtype=object), np.array([], dtype=object), empty, empty, np.array([])).tag == "run"
    assert Run.from_columns(["q1"], ["d1"], [0.5]).tag == "run"
    assert Run.from_dict({"q1": {"d1": 0.5}}).tag == "run"
    assert Run.from_dict({"q1": {"d1": 0.5}}, tag="mine").tag == "mine"


def test_write_run_default_tag_is_run(tmp_path):
    path = tmp_path / "run.txt"
    trec.write_run(path, ["q1", "q1"], ["a", "b"], [0.5, 0.25])
    assert path.read_text() == "q1 Q0 a 1 0.5 run\nq1 Q0 b 2 0.25 run\n"
