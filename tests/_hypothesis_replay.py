"""Hypothesis in this suite (issue 19): new examples on every run, and every run can be replayed.

- One seed per run: ``KGPOOL_HYPOTHESIS_SEED`` when given, else a fresh random one, printed in the run's header
  and summary. Each property test draws from its own seed, derived from the run's and the test's id
  (``property_seed``): the same whatever runs before it or in which pytest-xdist process, so
  ``KGPOOL_HYPOTHESIS_SEED=N pytest -k NAME`` draws that test's examples of the run again. The variable is
  exported, so xdist's worker processes (started after this) take the controller's seed. The seed goes in as
  hypothesis's own source of fresh seeds (``hypothesis.core.threadlocal``, pinned version; the tests of this
  module fail if that changes): ``@seed`` and ``--hypothesis-seed`` would switch the example database off.
- Failing examples go to the repository's example database, ``tests/hypothesis-examples`` (``KGPOOL_HYPOTHESIS_EXAMPLES``
  elsewhere); hypothesis replays the stored ones first on every later run.
- ``print_blob``: a failure also prints the ``@reproduce_failure(...)`` line that replays that one example.
"""
from __future__ import annotations

import os
import random
import zlib
from pathlib import Path

import pytest

SEED_VARIABLE = "KGPOOL_HYPOTHESIS_SEED"
EXAMPLES_VARIABLE = "KGPOOL_HYPOTHESIS_EXAMPLES"
EXAMPLES = Path(__file__).resolve().parent / "hypothesis-examples"


def run_seed(environ: dict[str, str]) -> int:
    """The run's seed: the variable's, else a new random one (a clear error for a non-integer)."""
    given = environ.get(SEED_VARIABLE)
    if given is None or given == "":
        return random.SystemRandom().randrange(2**32)
    try:
        return int(given)
    except ValueError:
        raise pytest.UsageError(f"the hypothesis seed must be an integer, got {given!r}") from None


def property_seed(run: int, test_id: str) -> int:
    """A property test's seed in a run: from the run's seed and the test's id (its parameters included)."""
    return zlib.crc32(f"{run}:{test_id}".encode())


def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    seed = run_seed(dict(os.environ))
    os.environ[SEED_VARIABLE] = str(seed)  # xdist's workers inherit it
    examples = Path(os.environ.get(EXAMPLES_VARIABLE) or EXAMPLES)
    # On top of the loaded profile, which is hypothesis's own "ci" one when a CI variable is set (no deadline, which
    # suits a shared machine); that profile's derandomize=True and database=None would undo both points above.
    settings.register_profile("kgpool", database=DirectoryBasedExampleDatabase(str(examples)), print_blob=True,
                              derandomize=False)
    settings.load_profile("kgpool")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    from hypothesis import is_hypothesis_test
    from hypothesis.core import threadlocal

    function = getattr(item, "obj", None)
    if function is not None and is_hypothesis_test(function):
        threadlocal._hypothesis_global_random = random.Random(property_seed(int(os.environ[SEED_VARIABLE]), item.nodeid))
    return (yield)


def _line() -> str:
    return (f"hypothesis seed {os.environ[SEED_VARIABLE]} (replay: {SEED_VARIABLE}={os.environ[SEED_VARIABLE]}); "
            f"failing examples kept in {os.environ.get(EXAMPLES_VARIABLE) or EXAMPLES}")


def pytest_report_header(config: pytest.Config) -> str:
    return _line()


def pytest_terminal_summary(terminalreporter) -> None:
    terminalreporter.write_line(_line())  # again at the end, beside the failures (and with -q, which drops headers)
