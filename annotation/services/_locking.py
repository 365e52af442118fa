"""Row locking helpers shared by the work-distribution services.

PostgreSQL: ``SELECT ... FOR UPDATE [SKIP LOCKED]``. SQLite has no row locks; there every write transaction
starts with BEGIN IMMEDIATE (settings ``transaction_mode``), so the whole transaction is serialised and the
plain queries below are already exclusive.
"""
from __future__ import annotations

from django.db import connections, router
from django.db.models import QuerySet


def lock_skipping(queryset: QuerySet) -> QuerySet:
    """Lock the selected rows, skipping rows another transaction holds (where the database can)."""
    features = connections[router.db_for_write(queryset.model)].features
    # Only the model's own rows: rows joined in by select_related (entities, relations) stay unlocked.
    of = ("self",) if features.has_select_for_update_of else ()
    if features.has_select_for_update_skip_locked:
        return queryset.select_for_update(skip_locked=True, of=of)
    return queryset.select_for_update(of=of)


def lock_waiting(queryset: QuerySet) -> QuerySet:
    """Lock the selected rows, waiting for other transactions to release them."""
    return queryset.select_for_update()
