"""Backup / restore across databases (issue 13): a campaign backed up on PostgreSQL restores into a fresh SQLite
instance (a subprocess: migrate, restore_campaign, backup_campaign) whose backup is the same archive, and that
archive restores back into PostgreSQL, again the same. Runs in the PostgreSQL pass of the suite (the SQLite pass
runs the same-database round trips of test_annotation_backup_roundtrip.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from annotation.services.backup import backup_campaign
from annotation.services.restore import restore_campaign
from tests._history_support import archive_members, judged_umls_campaign, wipe
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent


def on_fresh_sqlite(var_dir: Path, *commands: list[str]) -> None:
    """Run management commands, after ``migrate``, on a fresh embedded (SQLite) instance in ``var_dir``, in one
    subprocess (one interpreter start: they dominate the test's time)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "DATABASE_TEST_NAME", "KGPOOL_STORAGE_DIR", "CELERY_BROKER_URL")}
    env.update(KGPOOL_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="kgpool.settings")
    script = ("import sys, django; django.setup(); from django.core.management import call_command; "
              "call_command('migrate', '--noinput', verbosity=0); "
              f"[call_command(*command) for command in {[list(c) for c in commands]!r}]")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_postgresql_backup_restores_on_sqlite_and_back(storage, tmp_path):  # noqa: F811
    if connection.vendor != "postgresql":
        pytest.skip("needs the test database on PostgreSQL (the PostgreSQL pass of scripts/test.sh)")
    judged = judged_umls_campaign("crossdb")
    on_postgresql = tmp_path / "postgresql.tar.gz"
    backup_campaign(judged.campaign, on_postgresql)

    on_sqlite = tmp_path / "sqlite.tar.gz"
    on_fresh_sqlite(tmp_path / "sqlite-instance", ["restore_campaign", str(on_postgresql)],
                    ["backup_campaign", "crossdb", "-o", str(on_sqlite)])
    assert archive_members(on_sqlite) == archive_members(on_postgresql)

    wipe(judged.campaign)
    restored = restore_campaign(on_sqlite).campaign
    back = tmp_path / "back.tar.gz"
    backup_campaign(restored, back)
    assert archive_members(back) == archive_members(on_postgresql)
