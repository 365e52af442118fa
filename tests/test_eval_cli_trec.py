"""End to end: `python -m evaluation trec|macro` in a subprocess, against pytrec_eval."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pytrec_eval  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run([sys.executable, "-m", "evaluation", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> tuple[Path, Path, dict, dict]:
    rng = np.random.default_rng(3)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(25):
        judged = rng.choice(60, size=int(rng.integers(1, 12)), replace=False)
        qrels[f"q{q}"] = {f"e{d}": int(rng.choice([0, 1, 2])) for d in judged}
        retrieved = rng.choice(60, size=int(rng.integers(5, 30)), replace=False)
        run[f"q{q}"] = {f"e{d}": float(rng.integers(0, 5)) for d in retrieved}  # ties on purpose
    folder = tmp_path_factory.mktemp("trec")
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    run_path.write_text("".join(f"{q}\tQ0\t{d}\t1\t{s}\tmysys\n"  # constant rank column: ignored
                                for q, docs in run.items() for d, s in docs.items()))
    return qrels_path, run_path, qrels, run


def parse(stdout: str) -> dict[tuple[str, str], str]:
    rows = {}
    for line in stdout.splitlines():
        name, qid, value = line.split("\t")
        rows[(name.strip(), qid)] = value
    return rows


def test_per_query_and_summary_match_pytrec_eval(campaign) -> None:
    qrels_path, run_path, qrels, run = campaign
    result = run_cli("trec", str(qrels_path), str(run_path), "-q",
                     "-m", "map", "P.5,10", "ndcg_cut.10", "-m", "recip_rank", "bpref")
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout)
    measures = ["map", "P_5", "P_10", "ndcg_cut_10", "recip_rank", "bpref"]
    reference = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "P.5,10", "ndcg_cut.10", "recip_rank", "bpref"}).evaluate(run)
    for qid, values in reference.items():
        for measure in measures:
            assert rows[(measure, qid)] == f"{values[measure]:.4f}", (measure, qid)
    for measure in measures:
        mean = np.mean([values[measure] for values in reference.values()])
        assert rows[(measure, "all")] == f"{mean:.4f}"
    # trec_eval layout: measure name left-justified in 22 characters, then tab, qid, tab, value.
    first = result.stdout.splitlines()[0]
    assert first.startswith("map" + " " * 19 + "\t")


def test_default_measures_and_macro_alias(campaign) -> None:
    qrels_path, run_path, _, _ = campaign
    rows = parse(run_cli("trec", str(qrels_path), str(run_path)).stdout)
    assert rows[("runid", "all")] == "mysys" and rows[("num_q", "all")] == "25"
    # trec_eval's default, the "official" measures (ndcg is not one of them)
    assert {("map", "all"), ("gm_map", "all"), ("P_1000", "all"), ("bpref", "all"),
            ("iprec_at_recall_0.50", "all")} <= set(rows)
    macro_rows = parse(run_cli("macro", str(qrels_path), str(run_path)).stdout)
    assert {("recip_rank", "all"), ("success_10", "all"), ("ndcg_cut_10", "all")} <= set(macro_rows)


def test_complete_flag_averages_over_all_qrels_queries(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a 0 x 1\nb 0 y 1\n")
    run = tmp_path / "run.txt"
    run.write_text("a Q0 x 1 1.0 t\n")
    assert parse(run_cli("trec", str(qrels), str(run), "-m", "map").stdout)[("map", "all")] == "1.0000"
    assert parse(run_cli("trec", str(qrels), str(run), "-c", "-m", "map").stdout)[("map", "all")] == "0.5000"


def test_bad_run_file_reports_line_and_exits_2(campaign, tmp_path: Path) -> None:
    qrels_path, _, _, _ = campaign
    bad = tmp_path / "bad_run.txt"
    bad.write_text("q1 Q0 e1 1 0.5 t\nq1 Q0 e2 2 0.4 t\nq1 Q0 e3 3 high t\n")
    result = run_cli("trec", str(qrels_path), str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"error: {bad}:3: score 'high' is not a number"]


def test_unknown_measure_exits_2(campaign) -> None:
    qrels_path, run_path, _, _ = campaign
    result = run_cli("trec", str(qrels_path), str(run_path), "-m", "mapp")
    assert result.returncode == 2 and "unknown measure 'mapp'" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_imports_neither_django_nor_torch() -> None:
    code = ("import sys, evaluation.cli; evaluation.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'torch')))")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
