"""Model instances from plain cursor rows (issue 21): the judging API's hot statements are plain SQL on
PostgreSQL, where building and compiling querysets cost more CPU than running them."""
from __future__ import annotations


def from_row(connection, model, values: tuple):
    """A ``model`` instance from its concrete columns' raw values in column order (a plain cursor's row),
    converted as the ORM converts them on PostgreSQL (JSON columns; SQLite would need its backend's converters)."""
    fields = model._meta.concrete_fields
    converted = [f.from_db_value(v, None, connection) if v is not None and hasattr(f, "from_db_value") else v
                 for f, v in zip(fields, values)]
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


def columns(model, alias: str) -> str:
    """``alias.column, ...`` of the model's concrete fields, in ``from_row``'s order."""
    return ", ".join(f"{alias}.{f.column}" for f in model._meta.concrete_fields)
