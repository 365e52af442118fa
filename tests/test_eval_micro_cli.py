"""End to end: `python -m evaluation micro RANKS.tsv` in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RANKS = (
    "h1\t/people/person/a\tt1\thead\t1\t100\n"
    "h1\t/people/person/a\tt1\ttail\t2\t100\n"
    "h2\t/film/film/c\tt2\thead\t1.5\t100\n"
    "h2\t/film/film/c\tt2\ttail\t4\t100\n"
)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run([sys.executable, "-m", "evaluation", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def parse(stdout: str) -> dict[tuple[str, str], float]:
    return {(name.strip(), group): float(value)
            for name, group, value in (line.split("\t") for line in stdout.splitlines())}


def test_micro_with_breakdowns(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS)
    categories = tmp_path / "categories.tsv"
    categories.write_text("/people/person/a\t1-N\n/film/film/c\tN-N\n")
    result = run_cli("micro", str(ranks), "--hits", "1,3", "--by", "side", "--by", "relation",
                     "--by", "domain", "--by", "category", "--categories", str(categories))
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout)
    assert rows[("MR", "all")] == pytest.approx(8.5 / 4)
    assert rows[("MRR", "all")] == pytest.approx((1 + 0.5 + 1 / 1.5 + 0.25) / 4, abs=5e-5)
    assert rows[("Hits@1", "all")] == 0.25 and rows[("Hits@3", "all")] == 0.75
    assert rows[("MR", "head")] == 1.25 and rows[("MR", "tail")] == 3.0
    assert rows[("MRR", "/people/person/a")] == 0.75
    assert rows[("MRR", "macro-relation")] == pytest.approx((0.75 + (1 / 1.5 + 0.25) / 2) / 2, abs=5e-5)
    assert rows[("MR", "people")] == 1.5 and rows[("MR", "film")] == 2.75
    assert rows[("MR", "1-N/tail")] == 2.0 and rows[("MR", "N-N/head")] == 1.5


def test_relation_weights(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS)
    weights = tmp_path / "weights.tsv"
    weights.write_text("/people/person/a\t1\n/film/film/c\t0\n")
    rows = parse(run_cli("micro", str(ranks), "--relation-weights", str(weights)).stdout)
    assert rows[("MR", "reweighted")] == 1.5


def test_bad_side_names_line_and_exits_2(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS + "h3\t/film/film/c\tt3\tleft\t1\t100\n")
    result = run_cli("micro", str(ranks))
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {ranks}:5: side must be 'head' or 'tail', got 'left'"


def test_category_without_source_is_a_clean_error(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS)
    result = run_cli("micro", str(ranks), "--by", "category")
    assert result.returncode == 2 and "--by category needs" in result.stderr
    assert "Traceback" not in result.stderr


def test_category_from_train_triples(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS)
    train = tmp_path / "train.txt"
    # /people/person/a: one head with two tails -> tph 2 -> 1-N; /film/film/c: one-to-one -> 1-1.
    train.write_text("x\t/people/person/a\ty1\nx\t/people/person/a\ty2\nu\t/film/film/c\tv\n")
    result = run_cli("micro", str(ranks), "--by", "category", "--train", str(train))
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout)
    assert rows[("MR", "1-N/head")] == 1.0 and rows[("MR", "1-N/tail")] == 2.0
    assert rows[("MR", "1-1/head")] == 1.5 and rows[("MR", "1-1/tail")] == 4.0


def test_header_spaces_and_comments_accepted_zero_candidates_rejected(tmp_path: Path) -> None:
    # micro shares its reader with probe (evaluation.inputs): same format, same strict checks.
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text("# header next\nhead\trelation\ttail\tside\trank\tnum_candidates\n" + RANKS.replace("\t", " "))
    rows = parse(run_cli("micro", str(ranks)).stdout)
    assert rows[("MR", "all")] == pytest.approx(8.5 / 4)
    ranks.write_text(RANKS + "h3\t/film/film/c\tt3\thead\t1\t0\n")
    result = run_cli("micro", str(ranks))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"error: {ranks}:5: num_candidates must be a positive integer, got '0'"
