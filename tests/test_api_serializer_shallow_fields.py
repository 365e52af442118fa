"""JudgmentIn copies its declared fields shallowly per instance (annotation/api/serializers.ShallowFieldsMixin):
validation is the same as DRF's deep copies give, and no instance's state leaks into another's."""
from __future__ import annotations

from rest_framework import serializers

from annotation.api.serializers import JudgmentIn


class DeepJudgmentIn(serializers.Serializer):
    """The same declared fields with DRF's own per-instance deep copies: the reference."""


DeepJudgmentIn._declared_fields = JudgmentIn._declared_fields  # after the class: DRF's metaclass sets its own


CASES = [
    {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X", "request_id": "r1", "next": True},
    {"answer": "Y" * 13},  # over max_length
    {"answer": ""},  # blank
    {},  # answer missing
    {"answer": "N", "time_on_task_ms": -1},
    {"answer": "N", "time_on_task_ms": 86_400_001},
    {"answer": "N", "time_on_task_ms": "soon"},
    {"answer": "N", "time_on_task_ms": None, "quote": "q" * 5001},
    {"answer": "C", "comment": "c" * 5000, "request_id": "x" * 101},
    {"answer": "N", "next": "maybe"},
    {"answer": "N", "source_url": "s" * 2001, "next": "false"},
]


def outcome(serializer_class, data):
    serializer = serializer_class(data=data)
    valid = serializer.is_valid()
    return valid, dict(serializer.validated_data) if valid else serializer.errors


def test_validation_equals_drf_deep_copies_on_every_case():
    for data in CASES:
        assert outcome(JudgmentIn, data) == outcome(DeepJudgmentIn, data), data


def test_instances_share_no_field_state():
    first, second = JudgmentIn(data=CASES[1]), JudgmentIn(data=CASES[0])
    assert not first.is_valid() and second.is_valid()  # one fails, the other after it passes
    assert set(first.errors) == {"answer"} and second.errors == {}
    assert all(first.fields[name] is not second.fields[name] for name in JudgmentIn._declared_fields)
    assert all(field.parent is first for field in first.fields.values())
    assert all(field.parent is second for field in second.fields.values())
    # the declared (class-level) fields stay unbound
    assert all(getattr(field, "parent", None) is None for field in JudgmentIn._declared_fields.values())
