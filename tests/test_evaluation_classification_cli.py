"""End to end: ``python -m evaluation classify VALID.tsv TEST.tsv [--json]`` on hand-computed score files, and bad
score files refused with file:line and exit status 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.cli import main

REPO = Path(__file__).resolve().parent.parent
# r1: threshold 0.55 (midpoint of 0.2- and 0.9+); r2: 0.5+ and 0.7- -> every candidate classifies one of two
# right, the smallest (0.5) is kept; all of VALID: 0.2- 0.5+ 0.7- 0.9+ -> 0.35 and 0.8 both classify 3 of 4 right,
# the fallback is 0.35 (used by r3, absent from VALID)
VALID = "head\trelation\ttail\tscore\tlabel\na\tr1\tb\t0.9\t1\nc\tr1\td\t0.2\t0\ne\tr2\tf\t0.5\t1\ng\tr2\th\t0.7\t0\n"
TEST = ("# scored test triples\n"
        "a\tr1\tx\t0.8\t1\t1\n"
        "c\tr1\ty\t0.5\t0\t1\n"  # below 0.55: true negative, consistent
        "e\tr2\tz\t0.45\t1\t0\n"  # below 0.5: false negative
        "g\tr3\th\t0.4\t0\t0\n"  # r3 uses 0.35: false positive, inconsistent
        "i\tr3\tj\t0.3\t0\t1\n")  # true negative, consistent


def write(folder: Path, valid: str = VALID, test: str = TEST) -> tuple[str, str]:
    (folder / "valid.tsv").write_text(valid)
    (folder / "test.tsv").write_text(test)
    return str(folder / "valid.tsv"), str(folder / "test.tsv")


def rows(text: str) -> dict[tuple[str, str], str]:
    return {(name.strip(), group): value for name, group, value in (line.split("\t") for line in text.splitlines())}


def test_text_output(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-m", "evaluation", "classify", *write(tmp_path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    table = rows(done.stdout)
    # test: tp 1 (0.8), fn 1 (0.45), fp 1 (0.4), tn 2 (0.5, 0.3)
    assert [table[(cell, "all")] for cell in ("tp", "fn", "fp", "tn")] == ["1", "1", "1", "2"]
    assert table[("accuracy", "all")] == "0.6000" and table[("precision", "all")] == "0.5000"
    assert table[("recall", "all")] == "0.5000" and table[("f1", "all")] == "0.5000"
    # positives 0.8, 0.45 vs negatives 0.5, 0.4, 0.3: 0.8 beats 3, 0.45 beats 2 -> 5/6
    assert table[("roc_auc", "all")] == "0.8333"
    # ranked 0.8+ 0.5- 0.45+ ...: recall 1/2 at precision 1, recall 1 at precision 2/3 -> 5/6
    assert table[("pr_auc", "all")] == "0.8333"
    # per relation: r1 (0.8+ over 0.5-) 1; r2 (a positive only) and r3 (negatives only) undefined -> mean 1
    assert table[("roc_auc_macro", "all")] == "1.0000" and table[("roc_auc", "r2")] == "nan"
    # consistent: both positives with 0.5 and 0.3; inconsistent: both positives with 0.4
    assert table[("count", "consistent")] == "4" and table[("accuracy", "consistent")] == "0.7500"
    assert table[("count", "inconsistent")] == "3" and table[("fp", "inconsistent")] == "1"
    assert table[("threshold", "fallback")] == "0.35"
    assert table[("threshold", "r1")] == "0.55" and table[("own_threshold", "r1")] == "1"
    assert table[("threshold", "r2")] == "0.5" and table[("recall", "r2")] == "0.0000"
    assert table[("threshold", "r3")] == "0.35" and table[("own_threshold", "r3")] == "0"
    assert table[("recall", "r3")] == "nan" and table[("accuracy", "r3")] == "0.5000"


def test_json_output(tmp_path: Path, capsys) -> None:
    assert main(["classify", *write(tmp_path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["validation"]["triples"] == 4 and document["test"]["positives"] == 2
    assert document["fallback_threshold"] == pytest.approx(0.35)
    assert document["all"]["accuracy"] == pytest.approx(0.6) and document["all"]["tn"] == 2
    assert document["consistent"]["count"] == 4 and document["inconsistent"]["count"] == 3
    assert document["per_relation"]["r3"]["recall"] is None  # no positive: undefined, not 0
    assert document["per_relation"]["r3"]["own_threshold"] is False
    assert document["per_relation"]["r1"]["threshold"] == pytest.approx(0.55)
    assert set(document["per_relation"]) == {"r1", "r2", "r3"}


def test_without_consistency_column_and_with_categories(tmp_path: Path, capsys) -> None:
    test = "".join(line.rsplit("\t", 1)[0] + "\n" for line in TEST.splitlines()[1:])
    categories = tmp_path / "categories.tsv"
    categories.write_text("r1\t1-1\nr2\tN-N\nr3\tN-N\n")
    assert main(["classify", *write(tmp_path, test=test), "--json", "--categories", str(categories)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["consistent"] is None and document["inconsistent"] is None
    assert document["per_category"]["1-1"]["count"] == 2 and document["per_category"]["1-1"]["accuracy"] == 1.0
    assert document["per_category"]["N-N"]["count"] == 3 and document["per_category"]["N-N"]["tn"] == 1


@pytest.mark.parametrize("which, content, where, reason", [
    ("test", "a\tr1\tb\t0.5\n", ":1", "expected 5 or 6 columns"),
    ("test", "a\tr1\tb\t0.5\t2\n", ":1", "label must be 1 or 0"),
    ("test", "a\tr1\tb\t0.5\t1\t1\nc\tr1\td\t0.5\t0\n", ":2", "expected 6 columns like the lines before"),
    ("test", "a\tr1\tb\t0.5\t1\t1\nc\tr1\td\t0.5\t0\tyes\n", ":2", "consistent must be 1 or 0"),
    ("test", "a\tr1\tb\tnan\t1\n", ":1", "score is not finite"),
    ("test", "a\tr1\tb\thigh\t1\n", ":1", "score is not a number"),
    ("valid", VALID + "\na\tr1\tb\t0.1\t0\n", ":7", "duplicate triple 'a r1 b' (first on line 2)"),
    ("valid", "# nothing\n\n", "", "no scored triples"),
    ("valid", "a\tr1\tb\t0.9\t1\n", "", "has no negatives"),
])
def test_bad_files_name_file_and_line(tmp_path: Path, capsys, which: str, content: str, where: str,
                                      reason: str) -> None:
    valid, test = write(tmp_path, **{which: content})
    assert main(["classify", valid, test]) == 2
    out, err = capsys.readouterr()
    path = valid if which == "valid" else test
    assert out == "" and err.startswith(f"error: {path}{where}:") and reason in err and err.count("\n") == 1, err


def test_missing_file(tmp_path: Path, capsys) -> None:
    valid, _test = write(tmp_path)
    assert main(["classify", valid, str(tmp_path / "absent.tsv")]) == 2
    assert "absent.tsv: cannot read file: No such file or directory" in capsys.readouterr().err
