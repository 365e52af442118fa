"""A command run on a database that was never migrated (a fresh SQLite file, an empty PostgreSQL database) says to
run ``migrate``, in one line, instead of an OperationalError / ProgrammingError traceback (found from outside:
``campaign apply --plan`` first thing on a new machine)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_command_before_migrate_says_to_migrate(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_"))}
    env["KGPOOL_VAR_DIR"] = str(tmp_path)  # a new, empty SQLite file
    for command in (["campaign", "apply", "--plan", "examples/quickstart.toml"],
                    ["export_judgments", "any", "--format", "labels"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith("CommandError: the database has no kgpool tables yet: run `python manage.py "
                                   "migrate` first (no such table: "), lines[0]
