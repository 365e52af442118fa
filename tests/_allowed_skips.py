"""Fail the run when a test is skipped for a reason not on the allow-list (issue 19): a broken install or a
refactor must not turn into green skips.

``KGPOOL_ALLOWED_SKIPS`` names the groups of ``tests/allowed_skips.txt`` allowed in this run, comma-separated
(e.g. ``always,sqlite``); unset, nothing is checked (a developer's partial run). scripts/test.sh sets it per pass.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ALLOW_LIST = Path(__file__).resolve().parent / "allowed_skips.txt"
_unexpected: list[tuple[str, str]] = []


def allowed_patterns(groups: set[str], text: str) -> list[re.Pattern[str]]:
    """The patterns of the ``groups`` in the allow-list ``text`` (lines ``group: regular expression``)."""
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        group, _, pattern = line.partition(":")
        if group.strip() in groups:
            patterns.append(re.compile(pattern.strip()))
    return patterns


def _groups() -> set[str] | None:
    value = os.environ.get("KGPOOL_ALLOWED_SKIPS")
    return None if value is None else {g.strip() for g in value.split(",") if g.strip()}


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _check(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _check(report)  # a module skipped whole (pytest.skip or importorskip at import time)


def _check(report: pytest.TestReport | pytest.CollectReport) -> None:
    groups = _groups()
    if groups is None or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    if not any(p.search(reason) for p in allowed_patterns(groups, ALLOW_LIST.read_text())):
        _unexpected.append((report.nodeid, reason))


def pytest_terminal_summary(terminalreporter) -> None:
    if _unexpected:
        groups = ",".join(sorted(_groups() or ()))
        terminalreporter.section(f"unexpected skips (not allowed for {groups} in tests/allowed_skips.txt)", red=True)
        for node, reason in _unexpected:
            terminalreporter.line(f"{node}: {reason}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _unexpected and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
