"""Settings switch with the environment: embedded default, PostgreSQL, real broker, production checks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgpool.env import ImproperlyConfiguredEnv, env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "import json; from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], 'name': str(s.DATABASES['default']['NAME']), "
    "'eager': s.CELERY_TASK_ALWAYS_EAGER, 'broker': s.CELERY_BROKER_URL, 'debug': s.DEBUG, "
    "'secret_default': s.SECRET_KEY.startswith('kgpool-insecure')}))"
)
KGPOOL_VARS = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DEBUG", "SECRET_KEY",
               "KGPOOL_REQUIRE_SECRET_KEY", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE",
               "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS")


def run_with_env(tmp_path: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if key not in KGPOOL_VARS}
    clean.update({"DJANGO_SETTINGS_MODULE": "kgpool.settings", "KGPOOL_VAR_DIR": str(tmp_path / "var")}, **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120,
    )


def settings_with(tmp_path: Path, **env: str) -> dict:
    result = run_with_env(tmp_path, PROBE, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_embedded_default_is_sqlite_and_eager(tmp_path):
    found = settings_with(tmp_path)
    assert found["engine"] == "django.db.backends.sqlite3"
    assert found["name"] == str(tmp_path / "var" / "kgpool.sqlite3")
    assert found["eager"] is True and found["broker"] == ""
    assert found["debug"] is False


def test_database_url_selects_postgresql(tmp_path):
    found = settings_with(tmp_path, DATABASE_URL="postgres://kg:pw@db.example:5433/campaign")
    assert found["engine"] == "django.db.backends.postgresql"
    assert found["name"] == "campaign"


def test_broker_url_turns_off_eager_execution(tmp_path):
    found = settings_with(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:6379/0")
    assert found["eager"] is False and found["broker"] == "redis://127.0.0.1:6379/0"
    found = settings_with(tmp_path, CELERY_BROKER_URL="amqp://guest:guest@127.0.0.1:5672//")
    assert found["eager"] is False


def test_production_requires_a_secret_key(tmp_path):
    result = run_with_env(tmp_path, "pass", KGPOOL_REQUIRE_SECRET_KEY="true")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
    assert settings_with(tmp_path, KGPOOL_REQUIRE_SECRET_KEY="true", SECRET_KEY="x" * 60)["secret_default"] is False


def test_bad_boolean_is_a_clear_error(tmp_path):
    result = run_with_env(tmp_path, "pass", DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_check_deploy_passes_with_production_settings(tmp_path):
    env = dict(
        SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        KGPOOL_REQUIRE_SECRET_KEY="true", ALLOWED_HOSTS="kgpool.example.org",
        SECURE_SSL_REDIRECT="true", SESSION_COOKIE_SECURE="true", CSRF_COOKIE_SECURE="true",
        SECURE_HSTS_SECONDS="31536000",
    )
    result = run_with_env(
        tmp_path,
        "from django.core.management import call_command; call_command('check', deploy=True, fail_level='WARNING')",
        **env,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    # Without the HTTPS settings the deploy check must complain.
    insecure = run_with_env(
        tmp_path,
        "from django.core.management import call_command; call_command('check', deploy=True, fail_level='WARNING')",
        SECRET_KEY=env["SECRET_KEY"], ALLOWED_HOSTS="kgpool.example.org",
    )
    assert insecure.returncode != 0
    assert "security.W008" in insecure.stderr + insecure.stdout


def test_typed_env_helpers(monkeypatch):
    monkeypatch.setenv("X_BOOL", "Yes")
    monkeypatch.setenv("X_INT", "42")
    monkeypatch.setenv("X_LIST", "a.org, b.org,,")
    assert env_bool("X_BOOL") is True and env_bool("X_UNSET", True) is True
    assert env_int("X_INT", 0) == 42 and env_int("X_UNSET", 7) == 7
    assert env_list("X_LIST") == ["a.org", "b.org"]
    monkeypatch.setenv("X_INT", "4x")
    with pytest.raises(ImproperlyConfiguredEnv, match="X_INT='4x' is not an integer"):
        env_int("X_INT", 0)


@pytest.mark.parametrize("binding", ["true", "false"])
def test_the_database_urls_options_are_kept(tmp_path, binding):
    """?sslmode=require and other libpq options of DATABASE_URL reach the connection, with or without the
    prepared statements' options (they replaced them before: a TLS requirement was silently dropped)."""
    url = "postgres://kg:pw@db.example:5433/campaign?sslmode=require&application_name=kgpool-web"
    found = run_with_env(tmp_path, "from django.conf import settings; import json; "
                                   "print(json.dumps(settings.DATABASES['default']['OPTIONS']))",
                         DATABASE_URL=url, DB_SERVER_SIDE_BINDING=binding)
    assert found.returncode == 0, found.stderr
    options = json.loads(found.stdout.strip().splitlines()[-1])
    assert options["sslmode"] == "require" and options["application_name"] == "kgpool-web"
    assert ("server_side_binding" in options) is (binding == "true")
