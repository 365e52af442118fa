"""`python manage.py check --deploy` fails while SECRET_KEY is kgpool's built-in development key (issue #13,
item 9): Django's own check (security.W009) passes that key, since it is long and varied, yet it is public."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.core.checks import ERROR, run_checks
from django.test import override_settings

from kgpool.env import DEVELOPMENT_SECRET_KEY

ROOT = Path(__file__).resolve().parent.parent


def _deploy_errors() -> list[str]:
    return [m.id for m in run_checks(include_deployment_checks=True) if m.level >= ERROR]


def test_the_built_in_key_is_an_error_only_in_deploy_checks():
    with override_settings(SECRET_KEY=DEVELOPMENT_SECRET_KEY):
        assert "kgpool.E001" in _deploy_errors()
        assert "kgpool.E001" not in [m.id for m in run_checks()]  # plain `check` (development) stays quiet
        assert "security.W009" not in [m.id for m in run_checks(include_deployment_checks=True)]  # why it's needed
    with override_settings(SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"):
        assert "kgpool.E001" not in _deploy_errors()


def test_manage_py_check_deploy_exits_non_zero_without_a_secret_key(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "KGPOOL_REQUIRE_SECRET_KEY")}
    env.update(DJANGO_SETTINGS_MODULE="kgpool.settings", KGPOOL_VAR_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "kgpool.E001" in result.stderr and "built-in development key" in result.stderr
