"""The quickstart sets up the embedded demo from nothing and serves a site you can log in to."""
from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def embedded_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env["KGPOOL_VAR_DIR"] = str(tmp_path / "var")
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def table_counts(database: Path) -> dict[str, int]:
    with sqlite3.connect(database) as connection:
        return {
            table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("pooling_knowledgegraph", "pooling_system", "pooling_sample", "pooling_pool", "pooling_poolentry",
                          "annotation_campaign", "annotation_item", "annotation_membership")
        }


def test_quickstart_sets_up_and_is_rerunnable(tmp_path):
    command = [sys.executable, "manage.py", "quickstart", "--no-serve"]
    first = subprocess.run(command, cwd=ROOT, env=embedded_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    database = tmp_path / "var" / "kgpool.sqlite3"
    assert "135 entities, 46 relations, 5216 / 652 / 661 train / valid / test triples" in first.stdout
    mrrs = {name: float(mrr) for name, mrr in re.findall(r"^\s+(\w+)\s+validation filtered MRR ([0-9.]+)$", first.stdout, re.M)}
    assert set(mrrs) == {"transe", "distmult", "complex"}
    assert all(mrr > 0.5 for mrr in mrrs.values()), mrrs  # UMLS is easy: trained models are far above chance
    entries = int(re.search(r"(\d+) candidate triples to judge", first.stdout).group(1))
    counts = table_counts(database)
    gold = int(re.search(r"for people to judge, (\d+) gold checks", first.stdout).group(1))
    assert counts == {"pooling_knowledgegraph": 1, "pooling_system": 3, "pooling_sample": 1, "pooling_pool": 1,
                      "pooling_poolentry": entries, "annotation_campaign": 1, "annotation_item": entries + gold,
                      "annotation_membership": 4}
    assert entries > 1000
    assert re.search(r"^\s+admin\s+\S{8,}$", first.stdout, re.M)
    auto, to_judge = map(int, re.search(r"umls-demo: (\d+) auto-negative \(trivial filters\), (\d+) for people", first.stdout).groups())
    assert auto + to_judge == entries and to_judge > 0
    assert gold == round(0.05 * to_judge)  # examples/quickstart.toml: gold_rate = 0.05 of the items people judge
    assert "triples" in first.stderr  # progress bars go to stderr

    second = subprocess.run(command, cwd=ROOT, env=embedded_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert f"{entries} candidate triples to judge" in second.stdout
    assert table_counts(database) == counts  # nothing trained, sampled or pooled twice


def test_quickstart_serves_the_site_and_the_printed_login_works(tmp_path):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "quickstart", "--addr", f"127.0.0.1:{port}"],
        cwd=ROOT, env=embedded_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        output = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            output.append(line)
            if line.startswith("Serving kgpool"):
                break
        text = "".join(output)
        assert f"Serving kgpool at http://127.0.0.1:{port}/" in text, text
        password = re.search(r"^\s+annotator1\s+(\S+)$", text, re.M).group(1)

        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):  # the server starts listening just after printing
            try:
                page = opener.open(f"{base}/login/", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.2)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"username": "annotator1", "password": password, "csrfmiddlewaretoken": token,
                                       "next": "/campaigns/umls-demo/judge/"})
        request = urllib.request.Request(f"{base}/login/", data=form.encode(), headers={"Referer": f"{base}/login/"})
        judging = opener.open(request, timeout=30)  # login, then the next item is handed out
        page = judging.read().decode()
        assert re.search(r"/campaigns/umls-demo/judge/\d+/$", judging.geturl()), judging.geturl()
        assert "Your answer" in page and "Log out" in page
        question = re.search(r'<div class="question" id="question">\s*(\S.+?\?)\s*</div>', page, re.S)
        assert question, "the judging page shows the question as a yes/no sentence"
    finally:
        process.terminate()
        process.wait(timeout=30)
