"""The ``kgpool`` command (``pip install .``): kgpool's management commands and ``python -m evaluation``.

    kgpool quickstart                      = python manage.py quickstart
    kgpool campaign apply FILE [--plan]    = python manage.py campaign apply FILE [--plan]
    kgpool eval trec -m map QRELS RUN      = python -m evaluation trec -m map QRELS RUN (no Django, no torch)
    kgpool COMMAND ...                     = python manage.py COMMAND ... (import_kg, train_model, runserver...)

Installed outside a source checkout, kgpool keeps its database and files in ./var of the current folder unless
KGPOOL_VAR_DIR says otherwise (a source checkout uses its own var/, as manage.py does).
"""
from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

EVALUATION = ("eval", "evaluation")


def command_prefix(argv0: str, executable: str, cwd: Path) -> str:
    """How to run another kgpool command the way this one was run, so that it works from the same shell
    without an activated virtual environment: ``.venv/bin/kgpool`` as typed, or this Python (relative to ``cwd``
    when under it, e.g. ``.venv/bin/python``) with the manage.py that was run."""
    if Path(argv0).name == "kgpool":
        return shlex.quote(argv0)
    python = Path(executable)
    if python.is_absolute() and python.is_relative_to(cwd):
        python = python.relative_to(cwd)
    return f"{shlex.quote(str(python))} {shlex.quote(argv0 or 'manage.py')}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:  # Ctrl-C while Django starts (a command of ours answers it itself): one line, not a trace
        sys.stderr.write("interrupted\n")
        return 130


def _run(argv: list[str]) -> int:
    if argv and argv[0] in EVALUATION:
        from evaluation.cli import main as evaluation_main

        return evaluation_main(argv[1:])
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\nCommands: kgpool help (every management command), kgpool COMMAND --help.")
        if not argv:
            return 0
    checkout = Path(__file__).resolve().parent.parent / "manage.py"
    if not checkout.is_file():
        os.environ.setdefault("KGPOOL_VAR_DIR", str(Path.cwd() / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["kgpool", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main())
