"""An interrupted train_model does not leave its system "training" for ever (issue #13, item 9).

Real runs in subprocesses on their own SQLite file (UMLS, a long DistMult training): while one trains, a second
run of the same name is refused naming the live process; after SIGKILL (no clean-up possible) the rerun sees
that process is gone and trains it again; Ctrl-C and SIGTERM end the command with one line (exit 130, no
traceback) and mark the system failed, and the rerun trains it. On another host, only the heartbeat tells a
live training from a dead one; a ready system is trained again only with --replace."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from tests._pool_support import UMLS, import_umls, storage  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
LONG = ["--dim", "16", "--epochs", "100000", "--patience", "0", "--eval-every", "100000", "--batch-size", "512",
        "--device", "cpu", "--threads", "1"]
SHORT = ["--dim", "16", "--epochs", "2", "--batch-size", "512", "--device", "cpu", "--threads", "1"]


def _environment(var: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DATABASE_", "CELERY_", "KGPOOL_TEST_")) and key != "DJANGO_SETTINGS_MODULE"}
    env.update(KGPOOL_VAR_DIR=str(var), TRAINING_HEARTBEAT_S="1", PYTHONUNBUFFERED="1")
    return env


def _manage(env: dict[str, str], *args: str, wait: bool = True):
    command = [sys.executable, "manage.py", *args]
    if not wait:
        # SIGINT as from a terminal, even when the suite was started in the background (where it is ignored).
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _row(var: Path, name: str) -> tuple | None:
    with sqlite3.connect(var / "kgpool.sqlite3", timeout=30) as db:
        return db.execute("SELECT status, trainer, heartbeat_at, error FROM pooling_system WHERE name = ?",
                          (name,)).fetchone()


def _wait_training(var: Path, name: str, process: subprocess.Popen, beats: int = 2) -> tuple:
    """The row once ``process`` trains ``name`` and its heartbeat moved ``beats`` times."""
    seen: set[str] = set()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        row = _row(var, name)
        if row is not None and row[0] == "training":
            seen.add(row[2])
            if len(seen) > beats:
                return row
        time.sleep(0.3)
    raise AssertionError(f"{name} never trained with a live heartbeat: {_row(var, name)}")


def test_interrupted_trainings_can_be_run_again(tmp_path):
    var = tmp_path / "var"
    env = _environment(var)
    setup = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.core.management import call_command; "
         f"call_command('migrate', verbosity=0); call_command('import_kg', 'umls', {str(UMLS)!r}, verbosity=0)"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "kgpool.settings"}, capture_output=True, text=True,
        timeout=300)
    assert setup.returncode == 0, setup.stderr

    # SIGKILL: nothing can clean up; a rerun while it trains is refused, after it died it trains again
    killed = _manage(env, "train_model", "umls", "distmult", "--name", "killed", *LONG, wait=False)
    status, trainer, _beat, _error = _wait_training(var, "killed", killed)
    assert trainer.endswith(f":{killed.pid}")
    busy = _manage(env, "train_model", "umls", "distmult", "--name", "killed", *SHORT)
    assert busy.returncode == 1 and f"being trained right now by process {killed.pid} on " in busy.stderr, busy.stderr
    assert len(busy.stderr.strip().splitlines()) == 1 and "Traceback" not in busy.stderr
    killed.kill()
    killed.communicate()
    assert _row(var, "killed")[0] == "training"  # what the reviewer saw: stuck
    again = _manage(env, "train_model", "umls", "distmult", "--name", "killed", *SHORT)
    assert again.returncode == 0, again.stderr
    assert f"did not finish (process {killed.pid} on " in again.stdout and "no longer runs" in again.stdout
    assert "Trained umls/killed (distmult)" in again.stdout
    assert _row(var, "killed")[0] == "ready"

    # Ctrl-C and SIGTERM: one line, exit status 130, the system marked failed; the rerun trains it
    runs = {name: _manage(env, "train_model", "umls", "distmult", "--name", name, *LONG, wait=False)
            for name in ("ctrl-c", "sigterm")}
    for name, signum in (("ctrl-c", signal.SIGINT), ("sigterm", signal.SIGTERM)):
        _wait_training(var, name, runs[name], beats=0)
        runs[name].send_signal(signum)
        _out, err = runs[name].communicate(timeout=120)
        assert runs[name].returncode == 130, err
        last = err.strip().splitlines()[-1]
        assert last == f"CommandError: training umls/{name} interrupted; run the same command again to train it " \
                       "from the start", err
        assert "Traceback" not in err
        status, _trainer, _beat, error = _row(var, name)
        assert status == "failed" and "interrupted" in error
    again = _manage(env, "train_model", "umls", "distmult", "--name", "ctrl-c", *SHORT)
    assert again.returncode == 0 and "failed (interrupted" in again.stdout, again.stdout + again.stderr
    assert _row(var, "ctrl-c")[0] == "ready"


@pytest.mark.django_db
def test_a_training_on_another_host_is_live_until_its_heartbeat_stops(storage, settings):  # noqa: F811
    from pooling.models import System
    from pooling.services.rankings import rank_system
    from pooling.services.samples import draw_sample
    from pooling.services.systems import SystemServiceError, prepare_training, training_config

    settings.KGPOOL_TRAINING_STALE_S = 300
    kg = import_umls()
    config = training_config("distmult", dim=8, epochs=1)
    system, note = prepare_training(kg, "distmult", config=config)
    assert note == "" and system.status == System.Status.PENDING

    def trained_elsewhere(seconds_ago: float) -> None:
        System.objects.filter(pk=system.pk).update(status=System.Status.TRAINING, trainer="gpu-7.example:4242",
                                                    heartbeat_at=timezone.now() - timedelta(seconds=seconds_ago))

    trained_elsewhere(10)
    with pytest.raises(SystemServiceError, match=r"being trained right now by process 4242 on gpu-7.example, last "
                                                 r"sign of life 1\d s ago; wait for it, or add --replace"):
        prepare_training(kg, "distmult", config=config)
    again, note = prepare_training(kg, "distmult", config=config, replace=True)
    assert again.pk == system.pk and again.status == System.Status.PENDING and "(--replace)" in note
    trained_elsewhere(301)
    again, note = prepare_training(kg, "distmult", config=config)
    assert again.pk == system.pk and "did not finish (process 4242 on gpu-7.example, last sign of life 30" in note

    # a ready system is kept unless --replace, and never replaced once it has rankings
    call_command("train_model", "umls", "distmult", *SHORT, verbosity=0)
    with pytest.raises(CommandError, match=r"already exists in umls \(trained and ready, test MRR 0\.\d{4}\); "
                                           r"choose another --name, or add --replace"):
        call_command("train_model", "umls", "distmult", *SHORT, verbosity=0)
    call_command("train_model", "umls", "distmult", *SHORT, "--replace", verbosity=0)
    assert System.objects.get(pk=system.pk).status == System.Status.READY
    sample = draw_sample(kg, size=5, seed=1)
    rank_system(System.objects.get(pk=system.pk), sample, k=5)
    with pytest.raises(CommandError, match="has rankings"):
        call_command("train_model", "umls", "distmult", *SHORT, "--replace", verbosity=0)


@pytest.mark.django_db
def test_ctrl_c_in_import_checkpoint_is_one_line(storage, monkeypatch, tmp_path):  # noqa: F811
    from pooling.models import System
    from pooling.services import checkpoint_import

    import_umls()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_import, "import_checkpoint", interrupted)
    with pytest.raises(CommandError) as error:
        call_command("import_checkpoint", "umls", str(tmp_path), verbosity=0)
    assert error.value.returncode == 130
    assert str(error.value) == f"importing {tmp_path} interrupted; nothing was imported"
    assert not System.objects.exists()
