"""End to end: `python -m evaluation pairs` and `python -m evaluation property` in a subprocess."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_eval_micro_cli import parse, run_cli


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_pairs_sparse_and_completed(tmp_path: Path) -> None:
    # r1 ranked: (a,b) .9, (c,d) .8 [train: dropped], (e,f) .8, (g,h) .7 (tie with nothing), (x,y) .1
    run = write(tmp_path / "run.tsv", "r1\ta\tb\t0.9\nr1\tc\td\t0.8\nr1\te\tf\t0.8\nr1\tg\th\t0.7\n"
                                      "r1\tx\ty\t0.1\nr2\tp\tq\t5\nr2\ts\tu\t6\n")
    test = write(tmp_path / "test.txt", "a\tr1\tb\ng\tr1\th\nk\tr1\tl\np\tr2\tq\nm\tr3\tn\n")
    train = write(tmp_path / "train.txt", "c\tr1\td\n")
    judged = write(tmp_path / "judged.tsv", "e\tr1\tf\tY\nx\tr1\ty\tN\n")  # judgments: only Y is relevant
    result = run_cli("pairs", run, test, "--exclude", train, "-k", "3", "--per-relation")
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout)
    # r1 top-3 after exclusion: (a,b) rel, (e,f) not, (g,h) rel; |T| = 3: AP = (1 + 2/3) / 3, P = 2/3
    # r2: (s,u) 6 first, then (p,q): AP = (1/2) / 1, P = 1/3; r3 never ranked: 0
    ap = {"r1": (1 + 2 / 3) / 3, "r2": 0.5, "r3": 0.0}
    assert rows[("AP@3", "r1")] == pytest.approx(ap["r1"], abs=1e-4)
    assert rows[("P@3", "r2")] == pytest.approx(1 / 3, abs=1e-4)
    assert rows[("MAP@3", "all")] == pytest.approx(sum(ap.values()) / 3, abs=1e-4)
    assert rows[("WMAP@3", "all")] == pytest.approx((3 * ap["r1"] + ap["r2"]) / 5, abs=1e-4)
    assert rows[("WP@3", "all")] == pytest.approx((3 * 2 / 3 + 1 / 3) / 5, abs=1e-4)
    assert "r3" in result.stderr
    # completed labels: (e,f) judged positive, |T_r1| = 4: all three relevant
    result = run_cli("pairs", run, test, "--exclude", train, "-k", "3", "--positives", judged, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["MAP@3"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert document["missing"] == ["r3"]


def test_pairs_ties_in_file_order(tmp_path: Path) -> None:
    test = write(tmp_path / "test.txt", "c\tr\td\n")
    first = run_cli("pairs", write(tmp_path / "a.tsv", "r\ta\tb\t1\nr\tc\td\t1\n"), test, "-k", "2")
    second = run_cli("pairs", write(tmp_path / "b.tsv", "r\tc\td\t1\nr\ta\tb\t1\n"), test, "-k", "2")
    assert parse(first.stdout)[("MAP@2", "all")] == pytest.approx(0.5)
    assert parse(second.stdout)[("MAP@2", "all")] == pytest.approx(1.0)


@pytest.mark.parametrize("line, message", [
    ("r\ta\tb\n", "run.tsv:2: expected 4 columns"),
    ("r\ta\tb\tnan\n", "run.tsv:2: score is NaN"),
    ("r\ta\tb\tx\n", "run.tsv:2: score is not a number"),
    ("r\tc\td\t2\n", "run.tsv:2: pair ('c', 'd') of relation 'r' already ranked on line 1"),
    ("r\ta\tb\t1\n", "judged.tsv:1: label must be Y or N, got 'maybe'"),
])
def test_pairs_bad_run_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    run = write(tmp_path / "run.tsv", "r\tc\td\t1\n" + line)
    judged = write(tmp_path / "judged.tsv", "a\tr\tb\tmaybe\n")
    result = run_cli("pairs", run, write(tmp_path / "test.txt", "c\tr\td\n"), "--positives", judged)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_pairs_refuses_an_empty_test_file(tmp_path: Path) -> None:
    """Every metric would be nan: it printed nan with exit status 0 (found from outside)."""
    result = run_cli("pairs", write(tmp_path / "run.tsv", "r\ta\tb\t1\n"), write(tmp_path / "test.txt", "\n"))
    assert result.returncode == 2 and "test.txt: no test triples" in result.stderr and not result.stdout


def test_property_end_to_end(tmp_path: Path) -> None:
    train = write(tmp_path / "train.txt", "h0\tr0\tx\nh1\tr2\tx\nh2\tr1\tx\n")
    test = write(tmp_path / "test.txt", "h0\tr1\ty\nh0\tr2\ty\nh1\tr3\ty\nh2\tr1\ty\n")
    # h1 has no score for r1: -inf
    run = write(tmp_path / "run.tsv", "h0\tr0\t5\nh0\tr1\t3\nh0\tr2\t4\nh0\tr3\t4\n"
                                      "h1\tr0\t1\nh1\tr2\t9\nh1\tr3\t0\n")
    result = run_cli("property", run, test, "--train", train, "--hits", "1,3")
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout)
    # (h0, r1): r2, r3 above, r0 filtered: 3; (h0, r2): r3 tied: 1.5; (h1, r3): r0 above, r1 -inf, r2 filtered: 2
    assert rows[("MRR", "all")] == pytest.approx((1 / 3 + 1 / 1.5 + 1 / 2) / 3, abs=1e-4)
    assert rows[("MR", "all")] == pytest.approx(6.5 / 3, abs=1e-4)
    assert rows[("Hits@1", "all")] == pytest.approx(0.0)
    known = write(tmp_path / "valid.txt", "h0\tr3\tz\n")  # filtering r3 for h0 too: (h0, r1) 2, (h0, r2) 1
    result = run_cli("property", run, test, "--train", train, "--known", known, "--json")
    assert json.loads(result.stdout)["MRR"] == pytest.approx((1 / 2 + 1 + 1 / 2) / 3)


def test_property_bad_run(tmp_path: Path) -> None:
    train = write(tmp_path / "train.txt", "h0\tr0\tx\n")
    test = write(tmp_path / "test.txt", "h0\tr1\ty\n")
    result = run_cli("property", write(tmp_path / "run.tsv", "h0\tr1\t1\nh0\tr1\t2\n"), test, "--train", train)
    assert result.returncode == 2 and "run.tsv:2: head 'h0' and relation 'r1' already scored on line 1" in result.stderr
