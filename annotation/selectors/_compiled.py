"""SQL of the judging API's hot statements, built once per process and shape (issue 21).

Building a queryset and compiling it cost the API more CPU than running it (the profile of a next-item: about
two thirds of its Python time). ``compiled(key, build, *values)`` runs ``build`` once per ``key`` with stand-in
values (numbers, times and texts no real request uses), remembers which parameter each stand-in became, and
from then on only puts the request's values in those places. ``key`` names everything else the SQL depends on
(the database, and e.g. how many queue levels there are); ``build`` must use each value only as a parameter.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

_STAND_IN_TIME = datetime(1901, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
_cache: dict[tuple, tuple[str, list, list[int | None]]] = {}


def _stand_in(position: int, value: object) -> object:
    if isinstance(value, bool):
        raise TypeError("a flag changes the SQL's shape: put it in the key")
    if isinstance(value, int):
        return -1_000_000_007 - 7919 * position
    if isinstance(value, datetime):
        return _STAND_IN_TIME + timedelta(microseconds=position + 1)
    if isinstance(value, str):
        return f"\x1fstand-in-{position}\x1f"
    raise TypeError(f"no stand-in for {type(value).__name__}")


def compiled(key: tuple, build: Callable[..., tuple[str, list]], *values: object) -> tuple[str, list]:
    """(sql, params) of ``build(*values)``, compiled once per ``key``."""
    entry = _cache.get(key)
    if entry is None:
        stand_ins = [_stand_in(n, v) for n, v in enumerate(values)]
        sql, params = build(*stand_ins)
        slots = [next((n for n, s in enumerate(stand_ins) if type(p) is type(s) and p == s), None) for p in params]
        found = {slot for slot in slots if slot is not None}
        if found != set(range(len(values))):  # a value used other than as a parameter: never cache a wrong SQL
            raise ValueError(f"compiled {key!r}: values {sorted(set(range(len(values))) - found)} are not parameters")
        entry = _cache[key] = (sql, list(params), slots)
    sql, constants, slots = entry
    return sql, [constants[n] if slot is None else values[slot] for n, slot in enumerate(slots)]


def queryset_sql(queryset) -> tuple[str, list]:
    sql, params = queryset.query.sql_with_params()
    return sql, list(params)

