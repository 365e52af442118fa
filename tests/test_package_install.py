"""`pip install .` (issue 17): the wheel built from the tracked files installs a `kgpool` command that runs the
management commands (with the site's templates, the examples and the bundled dataset inside the package) and
`kgpool eval` = `python -m evaluation`, outside the checkout, keeping its data in ./var. Dependencies come from
the test environment (the install is --no-deps)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    return done


def test_pip_install_gives_a_kgpool_command(tmp_path):
    tracked = run(["git", "ls-files", "-co", "--exclude-standard"], ROOT).stdout.split()
    source = tmp_path / "source"
    for name in tracked:  # a fresh clone's files (and the new ones of this change), nothing built
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(source)], tmp_path)
    (wheel,) = (tmp_path / "dist").glob("kgpool-*.whl")
    target = tmp_path / "site"
    run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], tmp_path)
    kgpool = str(target / "bin" / "kgpool")
    assert (target / "kgpool" / "examples" / "quickstart.toml").is_file()
    assert (target / "kgpool" / "datasets" / "umls" / "train.txt").is_file()

    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "KGPOOL_VAR_DIR", "KGPOOL_STORAGE_DIR",
                                                            "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env["PYTHONPATH"] = str(target)
    (work / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    (work / "run").write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq2 Q0 d3 1 1.0 r\n")
    trec = run([kgpool, "eval", "trec", "-m", "map", "qrels", "run"], work, env).stdout
    assert trec.split() == ["map", "all", "0.7500"]  # (1/2 + 1) / 2

    run([kgpool, "migrate", "-v", "0"], work, env)
    assert (work / "var" / "kgpool.sqlite3").is_file()  # ./var, outside the checkout
    plan = run([kgpool, "campaign", "apply", str(target / "kgpool" / "examples" / "quickstart.toml"), "--plan"],
               work, env).stdout
    assert f"+ knowledge graph umls: import {target / 'kgpool' / 'datasets' / 'umls'}" in plan
    page = run([kgpool, "shell", "-c", "from django.test import Client; from django.template.loader import "
                "get_template; print(Client().get('/login/', HTTP_HOST='localhost').status_code, "
                "get_template('registration/login.html').origin.name)"], work, env).stdout.strip().splitlines()[-1]
    status, template = page.split()
    assert status == "200" and template.startswith(str(target / "kgpool" / "templates"))
    # run inside a checkout (the README's first command), where the apps come from the checkout: the quickstart
    # still finds its campaign file
    found = run([kgpool, "shell", "-c", "from pooling.management.commands.quickstart import CAMPAIGN_FILE; "
                 "print(CAMPAIGN_FILE.is_file(), CAMPAIGN_FILE)"], source, env).stdout.strip().splitlines()[-1]
    assert found.startswith("True "), found
