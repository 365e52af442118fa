"""``probe`` and ``kendall`` subcommands: parsing, hand-computed outputs, one-line errors with exit code 2."""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.cli_analysis import register

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# Same hand case as tests/test_eval_probe_core.py, with names. Train (|T| = 5):
#   e0 r0 e1 / e0 r1 e2 / e1 r0 e2 / e3 r1 e3 / e0 r0 e2
# Queries: answer e0 (head side) rank 1 of 10; answer e2 (tail side) rank 10 of 10; answer "new" unseen, rank 2 of 3
# alpha = 1, beta = 1: PROBE = 5/17; beta = 0: mean f* = (1 + 0 + 0.25) / 3 = 5/12
TRAIN = "e0\tr0\te1\ne0\tr1\te2\ne1 r0 e2\ne3\tr1\te3\ne0\tr0\te2\n"
RANKS = "e0\tr0\tx\thead\t1\t10\ne3\tr1\te2\ttail\t10\t10\n\n# a comment\ne1\tr0\tnew\ttail\t2\t3\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evaluation")
    register(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    return args.func(args)


@pytest.fixture
def probe_files(tmp_path: Path) -> tuple[Path, Path]:
    train, ranks = tmp_path / "train.txt", tmp_path / "ranks.tsv"
    train.write_text(TRAIN)
    ranks.write_text(RANKS)
    return ranks, train


def test_probe_prints_the_hand_computed_score(probe_files, capsys) -> None:
    ranks, train = probe_files
    assert _run(["probe", "--ranks", str(ranks), "--train", str(train), "--alpha", "1", "--beta", "1"]) == 0
    assert float(capsys.readouterr().out) == pytest.approx(5 / 17, rel=1e-9)
    assert _run(["probe", "--ranks", str(ranks), "--train", str(train)]) == 0  # defaults alpha 1, beta 0
    assert float(capsys.readouterr().out) == pytest.approx(5 / 12, rel=1e-9)


def test_probe_grid_prints_both_grids_as_tsv(probe_files, capsys) -> None:
    ranks, train = probe_files
    assert _run(["probe", "--ranks", str(ranks), "--train", str(train), "--grid"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "grid\talpha\tbeta\tprobe"
    rows = [line.split("\t") for line in lines[1:]]
    assert [(g, float(a), float(b)) for g, a, b, _ in rows] == [
        ("alpha", 1, 0), ("alpha", 0.5, 0), ("alpha", 0, 0), ("alpha", -0.5, 0), ("alpha", -1, 0),
        ("beta", 1, 0), ("beta", 1, 0.2), ("beta", 1, 0.4), ("beta", 1, 0.6), ("beta", 1, 0.8),
    ]
    scores = [float(row[3]) for row in rows]
    # f* per query: alpha=1 [1, 0, 1/4]; alpha=0 [1, 0, 1 - ln2/ln3]; alpha=-1 [1, 0, (3-2)/(3-1)]
    assert scores[0] == pytest.approx(5 / 12)
    assert scores[2] == pytest.approx((2 - math.log(2) / math.log(3)) / 3)
    assert scores[4] == pytest.approx(0.5)
    assert scores[5] == pytest.approx(5 / 12)


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        ("e0\tr0\tx\thead\t1\n", 1, "6 columns"),
        ("e0\tr0\tx\thead\t1\t10\ne0\tr0\tx\thead\tfirst\t10\n", 2, "not a number"),
        ("e0\tr0\tx\thead\t1\t10\n\ne0\tr0\tx\tleft\t1\t10\n", 3, "side"),
        ("e0\tr0\tx\thead\t0\t10\n", 1, "between 1 and"),
        ("e0\tr0\tx\thead\t11\t10\n", 1, "between 1 and"),
        ("e0\tr0\tx\thead\t1\tten\n", 1, "num_candidates"),
    ],
)
def test_probe_bad_ranks_file_gives_one_line_error(tmp_path, capsys, content, line, fragment) -> None:
    train, ranks = tmp_path / "train.txt", tmp_path / "bad_ranks.tsv"
    train.write_text(TRAIN)
    ranks.write_text(content)
    assert _run(["probe", "--ranks", str(ranks), "--train", str(train)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert f"{ranks}:{line}:" in captured.err and fragment in captured.err


def test_probe_bad_train_and_missing_file(tmp_path, capsys, probe_files) -> None:
    ranks, _ = probe_files
    train = tmp_path / "bad_train.txt"
    train.write_text("a\tr\tb\na r\n")
    assert _run(["probe", "--ranks", str(ranks), "--train", str(train)]) == 2
    assert f"{train}:2:" in capsys.readouterr().err
    assert _run(["probe", "--ranks", str(tmp_path / "missing.tsv"), "--train", str(train)]) == 2
    assert "missing.tsv" in capsys.readouterr().err


def test_kendall_prints_tau_per_common_metric(tmp_path, capsys) -> None:
    a, b = tmp_path / "sparse.csv", tmp_path / "completed.csv"
    a.write_text("system,MRR,Hits@1,MR\nTransE,0.30,0.2,100\nDistMult,0.20,0.2,300\nComplEx,0.25,0.1,200\n"
                 "extra,0.1,0.1,10\n")
    b.write_text("system,MR,MRR,Hits@1,other\nComplEx,150,0.40,0.3,1\nTransE,120,0.35,0.3,2\n"
                 "DistMult,400,0.45,0.2,3\n")
    assert _run(["kendall", str(a), str(b)]) == 0
    out = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert list(out) == ["MRR", "Hits@1", "MR"]
    # systems TransE, DistMult, ComplEx. MRR: reversed -> -1. MR: same order -> 1.
    # Hits@1 A [0.2, 0.2, 0.1] vs B [0.3, 0.2, 0.3]: (T,D) tied in A; (T,C) A+ B0 tied in B; (D,C) A+ B- D
    # tau-b = -1 / sqrt((3 - 1) (3 - 1)) = -0.5
    assert {k: float(v) for k, v in out.items()} == pytest.approx({"MRR": -1.0, "Hits@1": -0.5, "MR": 1.0})


@pytest.mark.parametrize(
    ("content", "line"),
    [("system,MRR\nA,0.1\nB,0.2,0.3\n", 3), ("system,MRR\nA,0.1\nB,high\n", 3), ("system,MRR\nA,1\nA,2\n", 3)],
)
def test_kendall_bad_table_gives_one_line_error(tmp_path, capsys, content, line) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(content)
    b.write_text("system,MRR\nA,0.1\nB,0.2\n")
    assert _run(["kendall", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{a}:{line}:" in err


def _subprocess(code_or_module: list[str], cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *code_or_module], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT)})


def test_register_end_to_end_in_a_fresh_process_without_django(probe_files) -> None:
    ranks, train = probe_files
    script = (
        "import argparse, sys\n"
        "from evaluation.cli_analysis import register\n"
        "parser = argparse.ArgumentParser(prog='evaluation')\n"
        "register(parser.add_subparsers(dest='command', required=True))\n"
        "args = parser.parse_args(sys.argv[1:])\n"
        "code = args.func(args)\n"
        "assert not any(m == 'django' or m.startswith('django.') or m == 'torch' for m in sys.modules), 'heavy'\n"
        "sys.exit(code)\n"
    )
    ok = _subprocess(["-c", script, "probe", "--ranks", str(ranks), "--train", str(train), "--beta", "1"])
    assert ok.returncode == 0, ok.stderr
    assert float(ok.stdout) == pytest.approx(5 / 17, rel=1e-9)
    bad = ranks.parent / "bad.tsv"
    bad.write_text("e0\tr0\tx\thead\t1\t10\ne0\tr0\tx\tup\t1\t10\n")
    failed = _subprocess(["-c", script, "probe", "--ranks", str(bad), "--train", str(train)])
    assert failed.returncode == 2
    assert "Traceback" not in failed.stderr and f"{bad}:2:" in failed.stderr


def test_python_dash_m_evaluation_probe_and_kendall(probe_files, tmp_path) -> None:
    ranks, train = probe_files
    done = _subprocess(["-m", "evaluation", "probe", "--ranks", str(ranks), "--train", str(train), "--beta", "1"])
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(5 / 17, rel=1e-9)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system,MRR\nA,0.1\nB,0.2\nC,0.3\n")
    b.write_text("system,MRR\nA,0.3\nB,0.2\nC,0.1\n")
    done = _subprocess(["-m", "evaluation", "kendall", str(a), str(b)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\t")[0] == "MRR" and float(done.stdout.split("\t")[1]) == pytest.approx(-1.0)
    bad = _subprocess(["-m", "evaluation", "probe", "--ranks", str(tmp_path / "nope.tsv"), "--train", str(train)])
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "nope.tsv" in bad.stderr
