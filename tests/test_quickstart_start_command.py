"""The command ``quickstart --no-serve`` prints to start the site works from the same shell without an activated
virtual environment (issue 15: it printed ``python manage.py runserver``, which fails outside the README's venv)."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kgpool.cli import command_prefix
from tests.test_quickstart import ROOT, embedded_env


@pytest.mark.parametrize(
    ("argv0", "executable", "expected"),
    [
        (".venv/bin/kgpool", "/src/.venv/bin/python", ".venv/bin/kgpool"),
        ("kgpool", "/src/.venv/bin/python", "kgpool"),  # found on PATH: it is there again next time
        ("manage.py", "/src/.venv/bin/python", ".venv/bin/python manage.py"),
        ("/src/manage.py", "/usr/bin/python3.11", "/usr/bin/python3.11 /src/manage.py"),
        ("manage.py", "/opt/my env/bin/python", "'/opt/my env/bin/python' manage.py"),
    ],
)
def test_the_prefix_names_the_program_that_ran(argv0, executable, expected):
    assert command_prefix(argv0, executable, Path("/src")) == expected


def test_the_printed_command_runs_without_the_venv_on_path(tmp_path):
    prefix = command_prefix("manage.py", sys.executable, ROOT)
    env = embedded_env(tmp_path) | {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": ""}
    done = subprocess.run([*shlex.split(prefix), "help", "runserver"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "runserver" in done.stdout
