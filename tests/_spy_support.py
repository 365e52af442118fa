"""Test helpers that need no Django (not collected: the name does not start with test_)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Replace ``owner.name`` by a wrapper that appends 1 to the returned list per call, then calls the original."""
    calls: list[int] = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def bench_module(filename: str) -> Iterator[ModuleType]:
    """A bench/ script imported as a module (for a module-scoped fixture to yield), removed afterwards."""
    spec = importlib.util.spec_from_file_location(f"bench_{Path(filename).stem}", BENCH / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)
