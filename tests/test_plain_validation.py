"""annotation/api/plain_validation: a submit body's validated data without DRF's field machinery is exactly DRF's,
or None (then DRF decides). Generated bodies around every constraint of JudgmentIn, and the bodies clients send."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from annotation.api.plain_validation import plain_validated
from annotation.api.serializers import JudgmentIn

NAMES = list(JudgmentIn._declared_fields)
EDGES = ["", " ", "Y", " Y", "Y ", "N", "C", "cant_tell", "x" * 12, "x" * 13, "x" * 100, "x" * 101, "x" * 2000,
         "x" * 2001, "x" * 5001, "a\x00b", "\ud800", "https://en.wikipedia.org/wiki/X", "\u00e9t\u00e9", "\u2003Y",
         "true", "1", "12", "12.0", -1, 0, 86_400_000, 86_400_001, 12.0, True, False, None, [], {}]
# half the values on a constraint's edge
values = st.one_of(st.sampled_from(EDGES), st.text(max_size=30), st.integers(-5, 10**9),
                   st.floats(allow_nan=False, allow_infinity=False))
BASE = {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X", "quote": "q", "comment": "",
        "time_on_task_ms": 9, "request_id": "r", "next": False}
# a valid body with some fields dropped and one or two changed: each constraint is met on its own
bodies = st.builds(lambda keep, changed: {**{k: v for k, v in BASE.items() if k in keep}, **changed},
                   st.sets(st.sampled_from(NAMES)),
                   st.dictionaries(st.sampled_from([*NAMES, "extra"]), values, max_size=2))


def drf(data) -> dict | None:
    serializer = JudgmentIn(data=data)
    return dict(serializer.validated_data) if serializer.is_valid() else None


@settings(max_examples=1500, deadline=None)
@given(bodies)
def test_plain_validation_is_drfs_or_steps_aside(body):
    plain = plain_validated(JudgmentIn, body)
    if plain is not None:
        assert plain == drf(body)
        assert [type(v) for v in plain.values()] == [type(v) for v in drf(body).values()]


@pytest.mark.parametrize("body", [
    {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X", "request_id": "r-1"},
    {"answer": "N"},
    {"answer": "C", "comment": "no source says either", "time_on_task_ms": 5400, "next": True},
    {"answer": "Y", "source_url": "https://www.wikidata.org/wiki/Q1", "quote": "born in", "time_on_task_ms": None,
     "request_id": "abc", "next": False},
])
def test_the_bodies_clients_send_take_the_plain_way(body):
    plain = plain_validated(JudgmentIn, body)
    assert plain is not None and plain == drf(body)


@pytest.mark.parametrize("body", [
    {"answer": " Y"},  # DRF trims: a conversion
    {"answer": "Y", "time_on_task_ms": "12"},  # DRF converts the string
    {"answer": "Y", "next": "true"},
    {"answer": ""},  # DRF's error
    {"source_url": "https://en.wikipedia.org/wiki/X"},  # no answer: DRF's error
    ["answer", "Y"],  # not an object
])
def test_bodies_that_need_drf_go_to_drf(body):
    assert plain_validated(JudgmentIn, body) is None


def test_a_serializer_with_its_own_validation_is_left_to_drf():
    class Checked(serializers.Serializer):
        answer = serializers.CharField(max_length=3)

        def validate_answer(self, value):
            return value.lower()

    class Defaulted(serializers.Serializer):
        answer = serializers.CharField(max_length=3, default=lambda: "Y")

    class Longer(serializers.Serializer):
        answer = serializers.CharField(max_length=3, validators=[lambda v: None])

    for serializer in (Checked, Defaulted, Longer):
        assert plain_validated(serializer, {"answer": "Y"}) is None
