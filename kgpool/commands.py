"""What every kgpool management command shares: one-line errors, Ctrl-C, bounded option types, atomic output files.

- :class:`KgpoolCommand` is the base class of the commands (those that read user files or run long above all):
  a ``CommandError`` is printed as one line (line breaks and characters that would drive the terminal escaped),
  and Ctrl-C or SIGTERM end the command with one line, :attr:`KgpoolCommand.interrupted_message` (by default
  ``interrupted, nothing was written``), and exit status 130 (128 + SIGINT), without a traceback. The services
  write in one transaction and remove their files when it fails, so an interrupted command leaves nothing behind;
  a command whose interruption leaves something (done chunks, a training that goes on in a worker) says so by
  setting ``interrupted_message`` (on the class, or on ``self`` for one stage of its work).
- :func:`refused` turns a service's error into the command's one-line error, with what did (not) happen.
- Option types parse strictly (ASCII digits, no ``1_000`` or ``²``; finite numbers) and are bounded, so a huge value
  is a usage error rather than an OverflowError, a database error or a MemoryError later.
- :func:`written_atomically`: an output file appears whole or not at all.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError
from django.db.utils import OperationalError, ProgrammingError

INT32_MAX = 2**31 - 1  # PositiveIntegerField / IntegerField columns (PostgreSQL integer)
_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")


def one_line(text: str) -> str:
    """``text`` with line breaks and other non-printable characters escaped (``\\n``, ``\\x1b``...)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def refused(exc: BaseException, consequence: str = "nothing was imported") -> CommandError:
    """The CommandError of a refused input: its one-line message and what (not) happened."""
    return CommandError(f"{one_line(str(exc))} ({consequence})")


class KgpoolCommand(BaseCommand):
    """A management command whose errors are one line and whose Ctrl-C / SIGTERM is one line and exit status 130."""

    interrupted_message = "interrupted, nothing was written"

    def execute(self, *args: object, **options: object) -> object:
        with _sigterm_as_interrupt():
            try:
                return super().execute(*args, **options)
            except KeyboardInterrupt:
                raise CommandError(self.interrupted_message, returncode=130) from None
            except CommandError as error:
                message = one_line(str(error))
                if message == str(error):
                    raise
                raise CommandError(message, returncode=error.returncode) from None
            except (OperationalError, ProgrammingError) as error:
                if not _missing_table(error):
                    raise
                raise CommandError("the database has no kgpool tables yet: run `python manage.py migrate` first "
                                   f"({str(error).strip().splitlines()[0]})") from None


def _missing_table(error: Exception) -> bool:
    """SQLite's "no such table: x" or PostgreSQL's 'relation "x" does not exist': a database never migrated."""
    text = str(error)
    return text.startswith("no such table") or (text.startswith("relation ") and "does not exist" in text)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a container stopping) raises KeyboardInterrupt like Ctrl-C, so that the same clean-up runs
    (transactions roll back, files are removed); only in the main thread, where Python delivers signals."""
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


# ------------------------------------------------------------------------------------ option types
def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse ``type=``: an integer written in ASCII digits, ``low <= value <= high``."""

    def parse(text: str) -> int:
        if not _INTEGER.fullmatch(text.strip()):
            raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not an integer")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: give an integer from {low} to {high}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its messages
    return parse


def bounded_int_list(low: int, high: int) -> Callable[[str], list[int]]:
    """argparse ``type=``: comma-separated integers, each as :func:`bounded_int` reads it."""
    item = bounded_int(low, high)

    def parse(text: str) -> list[int]:
        return [item(part) for part in text.split(",") if part.strip()]

    parse.__name__ = "list of integers"
    return parse


def bounded_float(low: float, high: float, *, above_low: bool = False) -> Callable[[str], float]:
    """argparse ``type=``: a finite number, ``low <= value <= high`` (``low < value`` with ``above_low``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not a finite number")
        if not (low < value if above_low else low <= value) or value > high:
            bounds = f"above {low}" if above_low else f"from {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a number {bounds}"
                                             + (f" to {high}" if high < math.inf else ""))
        return value

    parse.__name__ = "number"
    return parse


def positive_seconds(text: str) -> float:
    """argparse ``type=``: a finite number of seconds > 0 (``nan`` / ``inf`` would wait forever)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not a positive, finite number of seconds")
    return value


_DEVICE = re.compile(r"cpu|cuda(:\d{1,3})?")


def device_name(text: str) -> str:
    """argparse ``type=``: a torch device the project runs on, ``cpu``, ``cuda`` or ``cuda:N`` (another name was
    taken and failed later, or never, e.g. ``--device tpu``)."""
    if not _DEVICE.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"{one_line(text)[:40]!r} is not a device: cpu, cuda or cuda:N")
    return text.strip()


# ------------------------------------------------------------------------------------ output files
@contextmanager
def written_or_refused(path: Path | str) -> Iterator[TextIO]:
    """``written_atomically`` for a command's ``-o FILE``: a path it cannot write (a missing folder, a directory) is
    one CommandError line."""
    try:
        with written_atomically(path) as stream:
            yield stream
    except OSError as exc:
        raise CommandError(f"{path}: cannot write: {exc.strerror or exc}") from None


@contextmanager
def written_atomically(path: Path | str) -> Iterator[TextIO]:
    """A text stream (UTF-8, newlines as written) that becomes ``path`` when the block ends without an error; on an
    error or Ctrl-C the partial file is removed and ``path`` is left as it was."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(handle, 0o666 & ~umask)  # what open(path, "w") would have made, not mkstemp's 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
