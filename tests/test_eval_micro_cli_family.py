"""`python -m evaluation micro RANKS.tsv --family`: PyKEEN's rank family per group, from the num_candidates column."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.cli import main

import pykeen.metrics.ranking as pr  # noqa: E402

# relation a: head rank 1 of 100, tail rank 2 of 50; relation c: head rank 1.5 of 3 (a tie), tail rank 4 of 10
RANKS = (
    "h1\t/people/person/a\tt1\thead\t1\t100\n"
    "h1\t/people/person/a\tt1\ttail\t2\t50\n"
    "h2\t/film/film/c\tt2\thead\t1.5\t3\n"
    "h2\t/film/film/c\tt2\ttail\t4\t10\n"
)
ALL_RANKS, ALL_CANDIDATES = np.array([1.0, 2.0, 1.5, 4.0]), np.array([100, 50, 3, 10])


def run(tmp_path: Path, capsys, *args: str) -> dict[tuple[str, str], float]:
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text(RANKS)
    assert main(["micro", str(ranks), *args]) == 0
    return {(name.strip(), group): float(value)
            for name, group, value in (line.split("\t") for line in capsys.readouterr().out.splitlines())}


def test_family_per_group_equals_pykeen(tmp_path: Path, capsys) -> None:
    rows = run(tmp_path, capsys, "--family", "--hits", "1,3", "--by", "side", "--by", "relation")
    groups = {"all": slice(None), "head": [0, 2], "tail": [1, 3], "/people/person/a": [0, 1], "/film/film/c": [2, 3]}
    checks = {"AMRI": pr.AdjustedArithmeticMeanRankIndex(), "zMR": pr.ZArithmeticMeanRank(),
              "AMRR": pr.AdjustedInverseHarmonicMeanRank(), "AHits@1": pr.AdjustedHitsAtK(k=1),
              "zHits@3": pr.ZHitsAtK(k=3), "AGMRI": pr.AdjustedGeometricMeanRankIndex(), "MedR": pr.MedianRank()}
    for group, index in groups.items():
        for name, metric in checks.items():
            expected = metric(ranks=ALL_RANKS[index], num_candidates=ALL_CANDIDATES[index])
            assert rows[(name, group)] == pytest.approx(expected, abs=5e-5), (name, group)
    assert ("AMRI", "macro-relation") not in rows and ("MRR", "macro-relation") in rows


def test_family_reweighted_uses_per_relation_weights(tmp_path: Path, capsys) -> None:
    weights = tmp_path / "weights.tsv"
    weights.write_text("/people/person/a\t3\n/film/film/c\t1\n")
    rows = run(tmp_path, capsys, "--family", "--relation-weights", str(weights))
    # each relation has 2 rankings: per-ranking weights 3/2, 3/2, 1/2, 1/2
    per_ranking = np.array([1.5, 1.5, 0.5, 0.5])
    assert rows[("MR", "reweighted")] == pytest.approx(0.75 * 1.5 + 0.25 * 2.75, abs=5e-5)
    for name, metric in {"AMR": pr.AdjustedArithmeticMeanRank(), "zMRR": pr.ZInverseHarmonicMeanRank(),
                         "zGMR": pr.ZGeometricMeanRank()}.items():
        expected = metric(ranks=ALL_RANKS, num_candidates=ALL_CANDIDATES, weights=per_ranking)
        assert rows[(name, "reweighted")] == pytest.approx(expected, abs=5e-5), name


def test_without_the_flag_only_the_plain_metrics(tmp_path: Path, capsys) -> None:
    rows = run(tmp_path, capsys, "--by", "side")
    assert {name for name, _ in rows} == {"MR", "MRR", "Hits@1", "Hits@3", "Hits@10"}


def test_family_by_category_and_domain(tmp_path: Path, capsys) -> None:
    categories = tmp_path / "categories.tsv"
    categories.write_text("/people/person/a\t1-N\n/film/film/c\tN-N\n")
    rows = run(tmp_path, capsys, "--family", "--by", "category", "--categories", str(categories), "--by", "domain")
    amr = pr.AdjustedArithmeticMeanRank()
    for group, index in {"1-N/head": [0], "N-N/tail": [3], "people": [0, 1], "film": [2, 3]}.items():
        expected = amr(ranks=ALL_RANKS[index], num_candidates=ALL_CANDIDATES[index])
        assert rows[("AMR", group)] == pytest.approx(expected, abs=5e-5), group
