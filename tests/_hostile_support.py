"""Hostile input files and a guard against readers that block on them (shared by the hostile-input tests)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest


def fifo(path: Path) -> Path:
    """A named pipe nobody writes to: opening it for reading blocks unless the reader takes care."""
    os.mkfifo(path)
    return path


def dev_zero(path: Path) -> Path:
    """A link to /dev/zero: endless, no line end, size 0."""
    path.symlink_to("/dev/zero")
    return path


def directory(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def no_hang():
    """A reader that blocks (e.g. on a FIFO) fails the test after 30 s instead of hanging the suite (import this
    fixture into a test module to guard all its tests)."""
    def blocked(signum, frame):
        raise TimeoutError("blocked on its input")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
