"""Every TrecFormatError of evaluation/core/trec.py, message matched whole (issue 19: the older tests matched
fragments, so a mutated message still passed), and qrels relevance read as C's atol reads it (libc's own atol
through ctypes is the reference), on both readers (pandas' fast path and the line scan)."""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from evaluation.core.trec import TrecFormatError, read_qrels, read_run, relevance_value
from tests._raises_support import whole

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.atol.restype = ctypes.c_long
LIBC.atol.argtypes = [ctypes.c_char_p]


@pytest.mark.parametrize(("text", "message"), [
    (b"q1 0 d1 1\nq1 0 d2\n", "q.txt:2: expected 4 columns 'qid iter docid rel', got 3"),
    (b"# c\nq1 0 d1 1 x\n", "q.txt:2: expected 4 columns 'qid iter docid rel', got 5"),
    (b"q1 0 d1 1\nq1 0 d2 yes\n", "q.txt:2: relevance 'yes' is not an integer"),
    (b"q1 0 d1 1\nq1 0 d2 .x\n", "q.txt:2: relevance '.x' is not an integer"),
    (b"q1 0 d1 1\n\nq1 0 d2 0\nq1 0 d1 0\n", "q.txt:4: document 'd1' judged twice for query 'q1' (first on line 1)"),
    (b"q1 0 d1 1\nq1 0 d\xff 1\n", "q.txt:2: not valid UTF-8 text"),
])
def test_qrels_errors_whole(text, message):
    with pytest.raises(TrecFormatError, match=whole(message)):
        read_qrels("q.txt", text)


@pytest.mark.parametrize(("text", "message"), [
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 abc t\n", "r.txt:2: score 'abc' is not a number"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", "r.txt:2: expected 6 columns 'qid Q0 docid rank score tag', got 5"),
    (b"# c\nq1 Q0 d1 1 0.5\n", "r.txt:2: expected 6 columns 'qid Q0 docid rank score tag', got 5"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n",
     "r.txt:2: document 'd1' retrieved twice for query 'q1' (first on line 1)"),
])
def test_run_errors_whole(text, message):
    with pytest.raises(TrecFormatError, match=whole(message)):
        read_run("r.txt", text)


def test_missing_file_and_long_line(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(TrecFormatError, match=whole(f"{missing}: cannot read file: No such file or directory")):
        read_run(missing)
    with pytest.raises(TrecFormatError, match=whole(f"{tmp_path}: cannot read file: is a directory, not a regular file")):
        read_qrels(tmp_path)
    line = b"q1 0 d1 1\n" + b"q1 0 " + b"d" * 4000 + b" " + b"e" * 4000 + b" " * (1 << 20) + b" 1\n"
    with pytest.raises(TrecFormatError) as raised:
        read_qrels("q.txt", line)
    assert raised.value.line_number == 2


@pytest.mark.parametrize("field", ["0", "1", "2", "-1", "+3", "1.5", "2.9", "-0.5", ".5", "-.5", "+.7", "1e+8",
                                   "12abc", "007", "-007", "3.", "99999999999"])
def test_relevance_is_read_as_atol_reads_it(field):
    assert relevance_value(field) == LIBC.atol(field.encode())


@pytest.mark.parametrize(("text", "line"), [(b"q1 0 d1 1\nq1 0 d2 1000001\n", 2),  # every field an integer
                                            (b"q1 0 d1 -1000001\nq1 0 d2 1.5\n", 1),  # read line by line
                                            (b"q1 0 d1 99999999999999999999\n", 1)])  # past int64
def test_relevance_levels_beyond_a_million_are_refused(text, line):
    level = text.split(b"\n")[line - 1].split()[-1].decode()
    with pytest.raises(TrecFormatError, match=whole(f"q.txt:{line}: relevance {level} is beyond +-1,000,000: "
                                                    "relevance levels are small integers (a gain table has one entry "
                                                    "per level)")):
        read_qrels("q.txt", text)
    assert list(read_qrels("q.txt", b"q1 0 d1 1000000\nq1 0 d2 -1000000\n").relevance) == [1_000_000, -1_000_000]
    assert list(read_qrels("q.txt", b"q1 0 d1 1000000\nq1 0 d2 -1000000.5\n").relevance) == [1_000_000, -1_000_000]


@pytest.mark.parametrize("field", ["yes", "x1", ".", "-", "+", "-.", ".e1", "e5", ""])
def test_relevance_that_does_not_start_with_a_number_is_refused(field):
    assert relevance_value(field) is None


@pytest.mark.parametrize("comment", [b"", b"# header\n"])
def test_qrels_relevance_on_both_readers(comment):
    qrels = read_qrels("q.txt", comment + b"q1 0 a 2.9\nq1 0 b -1\nq2 0 a .5\nq2 0 c 3\n")
    assert list(qrels.relevance) == [2, -1, 0, 3]
    assert qrels.relevance.dtype == np.int64


@pytest.mark.parametrize("comment", [b"", b"# header\n"])
def test_run_scores_and_tag_on_both_readers(comment):
    run = read_run("r.txt", comment + b"q1 Q0 a 1 2.5 first\nq1 Q0 b 2 -inf mid\nq2 Q0 a 1 1e3 last\n")
    assert list(run.score) == [2.5, -np.inf, 1000.0] and run.tag == "last"
    assert run.score.dtype == np.float64


@pytest.mark.parametrize("text", [b"", b"\n", b"# only a comment\n"])
def test_empty_files(text):
    run = read_run("r.txt", text)
    assert (len(run), run.tag, run.has_duplicates()) == (0, "run", False)
    assert len(read_qrels("q.txt", text)) == 0
