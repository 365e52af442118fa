"""Ctrl-C while a command is still starting (Django importing its apps, before any command of ours runs) ends it
with one line and exit status 130, as Ctrl-C during a command does (tests/test_commands_errors_and_interrupts.py),
not with a 40-line traceback of the import that was running."""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgpool import cli

ROOT = Path(__file__).resolve().parent.parent


def interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def escaped(function, *args):
    """function(*args), failing the test (not ending the test run) when the interrupt gets through."""
    try:
        return function(*args)
    except KeyboardInterrupt:
        pytest.fail("the KeyboardInterrupt got through")


def test_manage_py_answers_an_interrupt_with_one_line(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("kgpool_manage", ROOT / "manage.py")
    manage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(manage)
    monkeypatch.setattr("django.core.management.execute_from_command_line", interrupt)
    monkeypatch.setattr(sys, "argv", ["manage.py", "check"])
    with pytest.raises(SystemExit) as stopped:
        escaped(manage.main)
    assert stopped.value.code == 130 and capsys.readouterr().err == "interrupted\n"


def test_the_kgpool_command_answers_an_interrupt_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr("django.core.management.execute_from_command_line", interrupt)
    assert escaped(cli.main, ["check"]) == 130 and capsys.readouterr().err == "interrupted\n"


def test_ctrl_c_while_django_starts(tmp_path):
    """A real SIGINT 0.3 s after the start: Django is still importing (a start takes over a second here)."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["KGPOOL_VAR_DIR"] = str(tmp_path)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "manage.py", "shell", "-c", "import time; time.sleep(60)"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert process.returncode == 130, output
    assert output == "interrupted\n", output
