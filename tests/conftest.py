"""Shared fixtures: the reference data in ../shared/data."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of the public reference datasets (see ../shared/data/README.md)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"reference data not found at {SHARED_DATA}; the suite needs ../shared/data")
    return SHARED_DATA
