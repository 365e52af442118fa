"""``kgpool serve`` (kgpool/serving.py): the site on its production server, granian by default or gunicorn.

The command line is checked as built; then each server runs for real (a subprocess on the test database,
PostgreSQL: SQLite's test database is this process's memory) and answers what a deployment asks of it: a page,
a static file, the judging API's next-item and submit (through the lane, the judgment stored), and the database
connection closed after each request when DB_CONN_MAX_AGE is 0 (Django closes it on request_finished, which a
WSGI server only sends by closing the response: a server that did not would leak a connection per worker)."""
from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation.models import Judgment, Role
from kgpool.serving import APPLICATION, server_command, split_bind
from tests._annotation_support import star_campaign, users
from tests._worker_support import database_url, free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("bind, expected", [
    ("127.0.0.1:8000", ("127.0.0.1", 8000)), ("0.0.0.0:1", ("0.0.0.0", 1)), ("[::1]:65535", ("::1", 65535)),
    ("localhost:80", ("localhost", 80)),
])
def test_bind_is_host_and_port(bind, expected):
    assert split_bind(bind) == expected


@pytest.mark.parametrize("bind", ["8000", ":8000", "host:", "host:0", "host:65536", "host:80a", "host:８０", "[::1]"])
def test_a_bad_bind_is_refused(bind):
    with pytest.raises(ValueError, match="HOST:PORT"):
        split_bind(bind)


def test_the_command_lines():
    granian = server_command("granian", "::1", 8000, 3, log_level="warning", python="py")
    assert granian[:3] == ["py", "-m", "granian"] and granian[-1] == APPLICATION
    for flag, value in [("--interface", "wsgi"), ("--host", "::1"), ("--port", "8000"), ("--workers", "3"),
                        ("--blocking-threads", "1"), ("--log-level", "warning")]:
        assert granian[granian.index(flag) + 1] == value
    assert "--respawn-failed-workers" in granian  # off by default in granian: a worker that dies would stay dead
    gunicorn = server_command("gunicorn", "::1", 8000, 3, python="py")
    assert gunicorn[:4] == ["py", "-m", "gunicorn", APPLICATION]
    assert gunicorn[gunicorn.index("--bind") + 1] == "[::1]:8000" and gunicorn[gunicorn.index("--workers") + 1] == "3"
    with pytest.raises(ValueError, match="unknown server"):
        server_command("waitress", "h", 1, 1)


def test_the_command_refuses_a_bad_bind_in_one_line():
    with pytest.raises(CommandError, match=r"^'nope': give HOST:PORT"):
        call_command("serve", "--bind", "nope")


def _other_connections() -> set[int]:
    """The backends of other connections to the test database (a Celery worker of another test may hold one)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid()")
        return {pid for (pid,) in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("server", ["granian", "gunicorn"])
def test_the_server_serves_the_site(tmp_path, settings, server):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: the server is another process, SQLite's test database is this one's memory")
    campaign = star_campaign(tmp_path, items=4, name=f"serve-{server}")
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    token = Token.objects.create(user=annotator).key
    before = _other_connections()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(), "DB_CONN_MAX_AGE": "0", "KGPOOL_VAR_DIR": str(tmp_path),
           "KGPOOL_STORAGE_DIR": str(settings.STORAGE_DIR), "DEBUG": "false", "KGPOOL_JUDGING_PATH": "fast"}
    log = open(tmp_path / "server.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--server", server,
         "--log-level", "warning"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=10) as client:
            page = _when_up(client, process, tmp_path / "server.log")
            assert page.status_code == 200 and "<form" in page.text
            assert page.headers["server"].lower().startswith(server)
            static = client.get("/static/kgpool/favicon.svg")
            assert static.status_code == 200 and static.content.lstrip().startswith(b"<svg")
            headers = {"Authorization": f"Token {token}"}
            handed = client.post(f"/api/campaigns/{campaign.name}/next-item/", headers=headers)
            assert handed.status_code == 200, handed.text
            hand_out = handed.json()["hand_out"]
            assert hand_out is not None
            answer = {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X"}
            submitted = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out}/judgment/", json=answer,
                                    headers=headers)
            assert submitted.status_code == 201, submitted.text
            assert submitted.headers["x-content-type-options"] == "nosniff"  # the response middleware's headers
        judgment = Judgment.objects.get(pk=submitted.json()["id"])
        assert (judgment.user_id, judgment.assignment_id, judgment.answer) == (annotator.pk, hand_out, "Y")
        deadline = time.monotonic() + 5
        while _other_connections() - before and time.monotonic() < deadline:  # closed with the response
            time.sleep(0.05)
        assert _other_connections() - before == set()
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
    assert process.returncode == 0, (tmp_path / "server.log").read_text()[-2000:]  # a clean stop on SIGTERM


def _when_up(client: httpx.Client, process: subprocess.Popen, log: Path) -> httpx.Response:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            return client.get("/login/")
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail(f"the server did not answer in 60 s: {log.read_text()[-2000:]}")


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True])
def test_the_command_hands_its_process_to_the_server(monkeypatch, settings, debug):
    """serve replaces itself with the server (signals reach it directly), warning first when DEBUG is on."""
    settings.DEBUG = debug
    started = []

    def execv(path, argv):
        started.append(argv)
        raise OSError("stand-in: not started")

    monkeypatch.setattr(os, "execv", execv)
    err = io.StringIO()
    with pytest.raises(CommandError, match="could not start gunicorn: stand-in"):
        call_command("serve", "--bind", "[::1]:8123", "--workers", "2", "--server", "gunicorn", stderr=err,
                     skip_checks=True)
    assert started == [server_command("gunicorn", "::1", 8123, 2)]
    assert ("DEBUG is on" in err.getvalue()) is debug
    assert shlex.join(started[0]) in err.getvalue()
