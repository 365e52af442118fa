"""Mutation testing of one module at a time with mutmut 2.5.1 (issue #19). Not part of the suite (too slow).

    nice -n 19 .venv/bin/python bench/mutation.py evaluation/core/kendall.py [--tests tests/test_x.py ...]
    nice -n 19 .venv/bin/python bench/mutation.py --list        # the module -> test files mapping

mutmut rewrites the module in place, one mutant at a time, and runs only the test files that cover that module
(TESTS below, or --tests), never the whole suite; the first failing test kills the mutant (pytest -x). The
Django-free modules' tests run with pytest-django switched off (-p no:django), which takes the start-up of each
run from about 5 s to about 1 s; modules whose tests need the database are listed in NEEDS_DJANGO.

Printed: the number of mutants, killed, timed out, survived, suspicious, skipped, and the score
killed / (killed + survived), where timeouts (a mutant that makes the tests run far longer, e.g. an endless loop)
are counted as killed; then the diff of each surviving mutant. The equivalent survivors (no input can tell them
apart from the original) are listed with a reason each in bench/mutation-equivalent.md.

mutmut keeps its state in ./.mutmut-cache (ignored by git); this script removes it before each run so that every
run starts fresh. Run it in a worktree nobody else is using: the module is edited on disk while it runs (mutmut
restores it at the end, and on Ctrl-C).
"""
from __future__ import annotations

import argparse
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mutmut-cache"

# module -> the test files that exercise it (the ones that import it, minus slow end-to-end ones).
TESTS: dict[str, list[str]] = {
    "evaluation/core/kendall.py": ["tests/test_eval_kendall_core.py"],
    "evaluation/core/micro.py": ["tests/test_eval_micro_metrics.py", "tests/test_eval_micro_reweight.py"],
    "evaluation/core/macro.py": ["tests/test_eval_macro_bpref_infap.py", "tests/test_eval_macro_ranks.py",
                                 "tests/test_eval_macro_pytrec.py"],
    "evaluation/core/probe.py": ["tests/test_eval_probe_core.py", "tests/test_eval_probe_self_loops.py"],
    "annotation/lib/agreement.py": ["tests/test_annotation_agreement.py", "tests/test_annotation_agreement_ci.py"],
    "annotation/lib/rules.py": ["tests/test_annotation_rules.py"],
    "annotation/lib/evidence.py": ["tests/test_annotation_evidence_rules.py"],
    "annotation/lib/sources.py": ["tests/test_annotation_sources.py"],
}
# modules whose tests use the Django test database (run with pytest-django on).
NEEDS_DJANGO: set[str] = set()


def pytest_command(test_files: list[str], django: bool) -> str:
    plugins = [] if django else ["-p", "no:django", "-p", "no:schemathesis"]
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *plugins, *test_files]
    return shlex.join(args)


def counts_from_cache() -> dict[str, int]:
    with sqlite3.connect(CACHE) as db:
        rows = db.execute("SELECT status, COUNT(*) FROM Mutant GROUP BY status").fetchall()
    return dict(rows)


def survivor_ids() -> list[int]:
    with sqlite3.connect(CACHE) as db:
        rows = db.execute("SELECT id FROM Mutant WHERE status = 'bad_survived' ORDER BY id").fetchall()
    return [row[0] for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", nargs="?", help="path of the module to mutate, e.g. evaluation/core/kendall.py")
    parser.add_argument("--tests", nargs="+", help="test files to run per mutant (default: the mapping above)")
    parser.add_argument("--list", action="store_true", help="print the module -> test files mapping and stop")
    options = parser.parse_args()
    if options.list or not options.module:
        for module, files in TESTS.items():
            print(f"{module}: {' '.join(files)}")
        return 0
    module = options.module
    if not (ROOT / module).is_file():
        parser.error(f"{module}: no such file under {ROOT}")
    test_files = options.tests or TESTS.get(module)
    if not test_files:
        parser.error(f"{module}: no test files mapped; pass --tests tests/test_x.py ...")
    for test_file in test_files:
        if not (ROOT / test_file).is_file():
            parser.error(f"{test_file}: no such test file")

    runner = pytest_command(test_files, django=module in NEEDS_DJANGO)
    baseline = subprocess.run(shlex.split(runner), cwd=ROOT, capture_output=True, text=True)
    if baseline.returncode != 0:
        print(baseline.stdout[-3000:], baseline.stderr[-3000:], sep="\n")
        print(f"the tests fail on the unmutated module; fix them first: {runner}", file=sys.stderr)
        return 1
    CACHE.unlink(missing_ok=True)
    subprocess.run([str(Path(sys.executable).parent / "mutmut"), "run", "--paths-to-mutate", module,
                    "--runner", runner, "--tests-dir", "tests", "--no-progress", "--simple-output"],
                   cwd=ROOT, stdout=subprocess.DEVNULL)
    counts = counts_from_cache()
    killed, timeout = counts.get("ok_killed", 0), counts.get("bad_timeout", 0)
    survived, suspicious = counts.get("bad_survived", 0), counts.get("ok_suspicious", 0)
    skipped, untested = counts.get("skipped", 0), counts.get("untested", 0)
    total = sum(counts.values())
    detected = killed + timeout + suspicious
    score = detected / (detected + survived) if detected + survived else float("nan")
    for mutant_id in survivor_ids():
        print(subprocess.run([str(Path(sys.executable).parent / "mutmut"), "show", str(mutant_id)],
                             cwd=ROOT, capture_output=True, text=True).stdout)
    print(f"{module}: {total} mutants; killed {killed}, timed out {timeout} (counted as killed), "
          f"suspicious {suspicious} (counted as killed), survived {survived}, skipped {skipped}, "
          f"untested {untested}")
    print(f"mutation score {score:.1%} = (killed + timeouts) / (killed + timeouts + survived) "
          f"with tests: {' '.join(test_files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
