"""The per-process SQL of the judging API's hot statements (issue 21, ``selectors/_compiled``): built once per
key with stand-in values, then only the request's values change; a value that is not a parameter is refused."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from annotation.selectors import _compiled
from annotation.selectors._compiled import compiled


def test_the_values_of_each_call_land_in_their_parameters():
    built = []

    def build(campaign_id, user_id, now):
        built.append((campaign_id, user_id, now))
        return "SELECT %s, %s, %s, %s, %s", [user_id, "judge", campaign_id, now, user_id]

    first = datetime(2026, 1, 2, tzinfo=timezone.utc)
    later = datetime(2026, 3, 4, tzinfo=timezone.utc)
    key = ("test-claim", id(build))
    assert compiled(key, build, 2, 2, first) == ("SELECT %s, %s, %s, %s, %s", [2, "judge", 2, first, 2])
    assert compiled(key, build, 7, 9, later) == ("SELECT %s, %s, %s, %s, %s", [9, "judge", 7, later, 9])
    assert len(built) == 1 and built[0][:2] != (2, 2)  # built once, with stand-ins (equal values stay apart)
    _compiled._cache.pop(key)


def test_a_value_the_sql_spells_out_is_refused():
    def build(campaign_id, limit):
        return f"SELECT %s LIMIT {limit}", [campaign_id]

    with pytest.raises(ValueError, match="not parameters"):
        compiled(("test-inline", id(build)), build, 3, 10)
    assert ("test-inline", id(build)) not in _compiled._cache
