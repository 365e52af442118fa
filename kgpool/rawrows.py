"""Model instances from plain cursor rows (issue 21): the judging API's hot statements are plain SQL on
PostgreSQL, where building and compiling querysets cost more CPU than running them."""
from __future__ import annotations

from functools import lru_cache

from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init


def from_row(connection, model, values: tuple, leave_out: frozenset[str] = frozenset()):
    """A ``model`` instance from its concrete columns' raw values in column order (a plain cursor's row),
    converted as the ORM converts them on PostgreSQL (JSON columns; SQLite would need its backend's converters).
    ``leave_out``: fields the row does not hold (``columns``' same argument); the instance has them deferred, as
    ``QuerySet.defer`` gives them: reading one loads it.

    The instance is what ``Model.from_db`` gives (the values as attributes, a saved row of ``connection``'s
    database) without running ``Model.__init__``, whose per-field checks were a tenth of a judging request's
    Python time (ten instances each). That skips the model's pre_init / post_init signals: only models that no
    receiver listens to take this way (tests/test_rawrows.py)."""
    attnames, converters, _columns = _loaded(model, leave_out)
    converted = [v if v is None or convert is None else convert(v, None, connection)
                 for convert, v in zip(converters, values)]
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(connection.alias, list(attnames), converted)
    instance = model.__new__(model)
    instance.__dict__.update(zip(attnames, converted))
    state = instance._state = ModelState()
    state.adding, state.db = False, connection.alias
    return instance


def columns(model, alias: str, leave_out: frozenset[str] = frozenset()) -> str:
    """``alias.column, ...`` of the model's concrete fields but ``leave_out``, in ``from_row``'s order."""
    return ", ".join(f"{alias}.{column}" for column in _loaded(model, leave_out)[2])


def width(model, leave_out: frozenset[str] = frozenset()) -> int:
    """How many columns ``columns`` gives."""
    return len(_loaded(model, leave_out)[0])


@lru_cache(maxsize=None)
def _loaded(model, leave_out: frozenset[str]) -> tuple[tuple[str, ...], tuple, tuple[str, ...]]:
    """(attnames, from_db_value converters or None, columns) of the fields a row holds."""
    if model._meta.pk.attname in leave_out or not leave_out <= {f.attname for f in model._meta.concrete_fields}:
        raise ValueError(f"{model.__name__}: cannot leave out {sorted(leave_out)}")
    fields = [f for f in model._meta.concrete_fields if f.attname not in leave_out]
    return (tuple(f.attname for f in fields), tuple(getattr(f, "from_db_value", None) for f in fields),
            tuple(f.column for f in fields))


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
