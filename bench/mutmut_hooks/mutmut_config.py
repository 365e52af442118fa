"""mutmut 2 hook used by bench/mutation.py --lines / --function: skip the mutants outside the chosen lines.

mutmut imports a module named ``mutmut_config`` from its path; bench/mutation.py puts this folder on PYTHONPATH
and passes the 1-based inclusive line ranges in MUTATION_LINES ("12-40,55-60"). Skipped mutants run no test and
are left out of the score.
"""
from __future__ import annotations

import os


def _ranges() -> list[tuple[int, int]]:
    spec = os.environ.get("MUTATION_LINES", "")
    return [(int(a), int(b)) for a, b in (part.split("-") for part in spec.split(",") if part)]


RANGES = _ranges()


def pre_mutation(context) -> None:
    line = context.current_line_index + 1  # mutmut counts lines from 0
    if RANGES and not any(first <= line <= last for first, last in RANGES):
        context.skip = True
