"""Shared fixtures: the reference data in ../shared/data."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["tests._allowed_skips", "tests._hypothesis_replay"]

SHARED_DATA = Path(os.environ.get("KGPOOL_SHARED_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of the public reference datasets (see ../shared/data/README.md)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"reference data not found at {SHARED_DATA}; the suite needs ../shared/data")
    return SHARED_DATA


DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With KGPOOL_ONLY_DATABASE_TESTS=1 (the PostgreSQL pass of scripts/test.sh) keep only the tests that use
    the database: the Django-free ones (metrics, engine, models) behave the same on any backend and already ran."""
    if os.environ.get("KGPOOL_ONLY_DATABASE_TESTS") != "1":
        return
    keep, drop = [], []
    for item in items:
        uses_database = item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        (keep if uses_database else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):  # noqa: F811 - wraps pytest-django's fixture
    """pytest-django's test database, plus: before it is dropped, end the sessions that worker and server
    subprocesses of the PostgreSQL tests may still hold (DROP DATABASE refuses while any is connected)."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
