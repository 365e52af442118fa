"""Model instances from plain cursor rows (issue 21): the judging API's hot statements are plain SQL on
PostgreSQL, where building and compiling querysets cost more CPU than running them."""
from __future__ import annotations

from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init


def from_row(connection, model, values: tuple):
    """A ``model`` instance from its concrete columns' raw values in column order (a plain cursor's row),
    converted as the ORM converts them on PostgreSQL (JSON columns; SQLite would need its backend's converters).

    The instance is what ``Model.from_db`` gives (the values as attributes, a saved row of ``connection``'s
    database) without running ``Model.__init__``, whose per-field checks were a tenth of a judging request's
    Python time (ten instances each). That skips the model's pre_init / post_init signals: only models that no
    receiver listens to take this way (tests/test_rawrows.py)."""
    fields = model._meta.concrete_fields
    converted = [f.from_db_value(v, None, connection) if v is not None and hasattr(f, "from_db_value") else v
                 for f, v in zip(fields, values)]
    attnames = [f.attname for f in fields]
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(connection.alias, attnames, converted)
    instance = model.__new__(model)
    instance.__dict__.update(zip(attnames, converted))
    state = instance._state = ModelState()
    state.adding, state.db = False, connection.alias
    return instance


def columns(model, alias: str) -> str:
    """``alias.column, ...`` of the model's concrete fields, in ``from_row``'s order."""
    return ", ".join(f"{alias}.{f.column}" for f in model._meta.concrete_fields)


#: psycopg caches the conversion of a query's %s placeholders to $n per query text up to this length
STATEMENT_CACHE_LENGTH = 8192


def cache_long_statements(length: int = STATEMENT_CACHE_LENGTH) -> None:
    """Let psycopg cache the placeholder conversion of statements up to ``length`` characters (its default, 4096,
    is below next-item's claim statement, 4,700: each request re-parsed it, 50-100 us of CPU). The constant is
    psycopg's own (psycopg._queries, 3.1-3.3); where a psycopg has no such constant this does nothing."""
    try:
        from psycopg import _queries
    except ImportError:  # SQLite-only installs
        return
    if getattr(_queries, "MAX_CACHED_STATEMENT_LENGTH", length) < length:
        _queries.MAX_CACHED_STATEMENT_LENGTH = length
