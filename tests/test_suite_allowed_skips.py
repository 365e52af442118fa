"""The allowed-skips check (issue 19): a skip whose reason is not allowed for the pass fails the run."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = '''
import pytest

def test_cuda():
    pytest.skip("needs a CUDA device")

def test_postgres():
    pytest.skip("needs the test database on PostgreSQL (the PostgreSQL pass of scripts/test.sh)")

def test_runs():
    assert True
'''


def run(tmp_path: Path, groups: str | None, body: str = TESTS) -> subprocess.CompletedProcess:
    (tmp_path / "test_probe.py").write_text(body)
    # Only the plugin under test: the installed plugins (schemathesis, playwright...) took 1.2 of 1.6 s per run.
    env = {k: v for k, v in os.environ.items() if k != "KGPOOL_ALLOWED_SKIPS"} | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if groups is not None:
        env["KGPOOL_ALLOWED_SKIPS"] = groups
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django",
                           "-c", os.devnull, "--rootdir", str(tmp_path), "-p", "tests._allowed_skips",
                           str(tmp_path / "test_probe.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_skip_not_allowed_in_the_pass_fails_it(tmp_path):
    done = run(tmp_path, "always")
    assert done.returncode == 1, done.stdout
    assert "unexpected skips" in done.stdout and "test_probe.py::test_postgres" in done.stdout
    assert "test_probe.py::test_cuda:" not in done.stdout  # allowed everywhere


def test_allowed_skips_pass_and_no_check_without_the_variable(tmp_path):
    assert run(tmp_path, "always,sqlite").returncode == 0
    assert run(tmp_path, None).returncode == 0


def test_a_failed_import_is_not_hidden_as_a_skip(tmp_path):
    body = 'import pytest\nnp = pytest.importorskip("no_such_module_kgpool")\n\ndef test_x():\n    pass\n'
    done = run(tmp_path, "always,sqlite,no-chromium", body)
    assert done.returncode == 1 and "no_such_module_kgpool" in done.stdout
