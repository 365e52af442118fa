"""Hypothesis runs can be replayed (issue 19): the run's seed is printed and decides every draw, and a failing
example is stored in the example database and tried first by the next run."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis._settings import _CI_VARS

from tests._hypothesis_replay import SEED_VARIABLE, property_seed, run_seed

ROOT = Path(__file__).resolve().parent.parent

DRAWS = '''
import os
from hypothesis import given, settings, strategies as st

@settings(max_examples=20)
@given(st.integers(-10**9, 10**9))
def test_draws(n):
    with open(os.environ["DRAWN"], "a") as out:
        out.write(f"{n}\\n")
'''

FAILS = '''
from hypothesis import given, settings, strategies as st

@settings(max_examples=200)
@given(st.integers(0, 10**6))
def test_small(n):
    assert n < 500_000
'''


# Hypothesis loads its own "ci" profile (derandomize=True, no example database) when it sees a CI variable:
# the suite must behave the same on a developer's machine and in CI.
CI_VARIABLES = tuple(_CI_VARS)  # hypothesis's own list (pinned version)


@pytest.fixture(params=["local", "ci"])
def where(request) -> str:
    return request.param


def run(tmp_path: Path, body: str, seed: str | None, where: str = "local", **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_probe.py").write_text(body)
    environ = {k: v for k, v in os.environ.items() if k != SEED_VARIABLE and k not in CI_VARIABLES}
    if where == "ci":
        environ["CI"] = "true"
    # Only hypothesis's plugin and the one under test: autoloading every installed plugin (schemathesis,
    # playwright...) took 1.2 of 1.6 s per run.
    environ.update(env, KGPOOL_HYPOTHESIS_EXAMPLES=str(tmp_path / "examples"), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if seed is not None:
        environ[SEED_VARIABLE] = seed
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django",
                           "-c", os.devnull, "--rootdir", str(tmp_path), "-p", "_hypothesis_pytestplugin",
                           "-p", "tests._hypothesis_replay", str(tmp_path / "test_probe.py")],
                          cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def drawn(tmp_path: Path, seed: str | None, name: str, where: str) -> tuple[list[int], str]:
    out = tmp_path / name
    done = run(tmp_path, DRAWS, seed, where, DRAWN=str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return [int(x) for x in out.read_text().split()], done.stdout


def test_the_seed_decides_the_draws_and_is_printed(tmp_path, where):
    first, header = drawn(tmp_path, "7", "a.txt", where)
    again, _ = drawn(tmp_path, "7", "b.txt", where)
    other, _ = drawn(tmp_path, "8", "c.txt", where)
    assert "hypothesis seed 7 (replay: KGPOOL_HYPOTHESIS_SEED=7)" in header
    assert len(first) >= 10 and first == again
    assert other != first


def test_without_a_seed_each_run_draws_anew_and_prints_its_seed(tmp_path, where):
    first, header_one = drawn(tmp_path, None, "a.txt", where)
    second, header_two = drawn(tmp_path, None, "b.txt", where)
    seeds = [line.split()[2] for line in (header_one + header_two).splitlines() if line.startswith("hypothesis seed ")]
    seeds = list(dict.fromkeys(seeds))  # each run prints it twice (header and summary)
    assert len(seeds) == 2 and seeds[0] != seeds[1]
    assert first != second
    replayed, _ = drawn(tmp_path, seeds[0], "c.txt", where)  # the printed seed replays the first run
    assert replayed == first


def test_a_failing_example_is_stored_then_tried_first(tmp_path, where):
    failed = run(tmp_path, FAILS, "3", where)
    assert failed.returncode == 1
    assert "@reproduce_failure(" in failed.stdout
    assert "assert 500000 < 500000" in failed.stdout  # shrunk to the boundary
    stored = [p for p in (tmp_path / "examples").rglob("*") if p.is_file()]
    assert stored, "the failing example was not stored"
    # another seed still fails at once on the stored example, before drawing anything
    again = run(tmp_path, FAILS, "99", where)
    assert again.returncode == 1 and "assert 500000 < 500000" in again.stdout


def test_seed_choice():
    assert run_seed({SEED_VARIABLE: "9"}) == 9
    fresh = {run_seed({}) for _ in range(5)}
    assert len(fresh) > 1 and all(0 <= s < 2**32 for s in fresh)
    assert run_seed({SEED_VARIABLE: ""}) in range(2**32)
    with pytest.raises(pytest.UsageError, match="must be an integer, got 'x'"):
        run_seed({SEED_VARIABLE: "x"})


def test_each_test_has_its_own_seed_from_the_run():
    assert property_seed(7, "m.py::test_a") == property_seed(7, "m.py::test_a")
    assert len({property_seed(7, "m.py::test_a"), property_seed(7, "m.py::test_b"), property_seed(8, "m.py::test_a")}) == 3
