"""Writes: which process trains a system, and whether that training is still alive.

A training records its process in ``System.trainer`` (``host:pid``) and a background thread refreshes
``System.heartbeat_at`` every ``KGPOOL_TRAINING_HEARTBEAT_S`` seconds. The training is *stale* (its process is
gone, it may be started again) when, on this host, that pid no longer runs, or when no heartbeat came for
``KGPOOL_TRAINING_STALE_S`` seconds (a worker on another host, or a pid reused by another program). Ctrl-C and
SIGTERM mark the system failed on the way out; a SIGKILL, a crash or a lost machine are caught by staleness.
"""
from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from pooling.models import System


class TrainingBusyError(Exception):
    """Another live process is training the system (the message says which, and what to do)."""


@dataclass(frozen=True)
class TrainingOwner:
    """The process recorded as training a system, whether it is alive, and that in words."""

    trainer: str
    alive: bool
    description: str  # e.g. "process 4242 on gpu-1, last sign of life 12 s ago"


def current_trainer() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _pid_running(pid: int) -> bool:
    """True when ``pid`` runs on this host (a zombie, killed but not yet reaped, does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def training_owner(system: System, now: datetime | None = None) -> TrainingOwner | None:
    """Who trains ``system`` and whether that process is alive; None unless the system is training."""
    if system.status != System.Status.TRAINING:
        return None
    now = now or timezone.now()
    age = (now - system.heartbeat_at).total_seconds() if system.heartbeat_at else None
    seen = f"last sign of life {max(age, 0):.0f} s ago" if age is not None else "no sign of life recorded"
    host, _, pid = system.trainer.rpartition(":")
    if not host or not pid.isdigit() or age is None:
        return TrainingOwner(system.trainer, False, f"an unrecorded process ({seen})")
    recent = age < settings.KGPOOL_TRAINING_STALE_S
    if system.trainer == current_trainer():
        return TrainingOwner(system.trainer, True, f"this process ({seen})")
    if host == socket.gethostname() and not _pid_running(int(pid)):
        return TrainingOwner(system.trainer, False, f"process {pid} on {host}, which no longer runs ({seen})")
    return TrainingOwner(system.trainer, recent, f"process {pid} on {host}, {seen}")


def claim_training(system: System) -> str:
    """Record this process as the one training ``system`` (status training); returns its trainer id.

    Raises :class:`TrainingBusyError` while another live process trains it. The claim is a conditional update
    on what was read, so of two processes claiming at once only one wins.
    """
    system.refresh_from_db()
    owner = training_owner(system)
    me = current_trainer()
    if owner is not None and owner.alive and owner.trainer != me:
        raise TrainingBusyError(f"{system.kg.name}/{system.name} is being trained right now by {owner.description}")
    claimed = System.objects.filter(pk=system.pk, status=system.status, trainer=system.trainer).update(
        status=System.Status.TRAINING, trainer=me, heartbeat_at=timezone.now(), error="")
    if not claimed:
        raise TrainingBusyError(f"{system.kg.name}/{system.name} was claimed by another process at the same moment")
    return me


def still_trained_by(system_id: int, trainer: str) -> bool:
    return System.objects.filter(pk=system_id, status=System.Status.TRAINING, trainer=trainer).exists()


@contextmanager
def heartbeat(system_id: int, trainer: str, interval: float | None = None) -> Iterator[None]:
    """Refresh the system's heartbeat from a background thread while the block runs (as long as ``trainer``
    still owns it)."""
    interval = float(interval if interval is not None else settings.KGPOOL_TRAINING_HEARTBEAT_S)
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                try:
                    System.objects.filter(pk=system_id, trainer=trainer).update(heartbeat_at=timezone.now())
                except DatabaseError:
                    pass  # best effort: the next beat tries again
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"kgpool-heartbeat-{system_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
