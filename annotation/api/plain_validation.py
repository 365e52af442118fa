"""A DRF serializer's validated data for a JSON body that needs none of DRF's conversions (issue 21).

The judging lane validates every submit. DRF's serializer machinery (field binding, ``run_validation`` per field,
the validators, the error plumbing) cost 0.15-0.3 ms of a submit's CPU; a body as the judging clients send it
(strings already trimmed, an integer, a boolean) needs none of it. ``plain_validated`` gives exactly what
``serializer_class(data=data).validated_data`` would, reading each field's constraints from the serializer
itself, or None whenever DRF could answer anything else (an error, a conversion: " Y ", "12", "true", a null,
a missing required field, a field type or a serializer hook it does not know): the caller then asks DRF.
``tests/test_plain_validation.py`` checks the equality on generated bodies."""
from __future__ import annotations

from functools import lru_cache

from rest_framework import fields, serializers

_ABSENT = object()
_REQUIRED = object()  # a plan's default: the field must be there


def plain_validated(serializer_class: type[serializers.Serializer], data: object) -> dict | None:
    """``serializer_class``'s validated data for ``data`` (a parsed JSON body), or None for DRF to decide."""
    plan = _plan(serializer_class)
    if plan is None or type(data) is not dict:
        return None
    validated = {}
    for name, check, default in plan:
        value = data.get(name, _ABSENT)
        if value is _ABSENT:
            if default is _REQUIRED:
                return None  # DRF's error
            if default is not _ABSENT:  # optional without a default: DRF leaves it out
                validated[name] = default
        elif check(value):
            validated[name] = value
        else:
            return None
    return validated


@lru_cache(maxsize=None)
def _plan(serializer_class: type[serializers.Serializer]) -> tuple | None:
    """(name, check, default) per field, or None when the serializer has anything this module does not mirror."""
    if serializer_class.validate is not serializers.Serializer.validate:
        return None
    if getattr(getattr(serializer_class, "Meta", None), "validators", None):
        return None
    plan = []
    for name, field in serializer_class._declared_fields.items():
        if field.read_only or field.source not in (None, name) or hasattr(serializer_class, f"validate_{name}"):
            return None
        if field.required:
            default = _REQUIRED
        elif field.default is fields.empty:
            default = _ABSENT
        elif callable(field.default):
            return None
        else:
            default = field.default
        check = _check(field)
        if check is None:
            return None
        plan.append((name, check, default))
    return tuple(plan)


def _check(field: fields.Field):
    """A test of a value that the field takes unchanged, or None for a field type not mirrored here."""
    kind = type(field)
    if kind is fields.CharField and field.trim_whitespace and field.min_length is None:
        limit, blank = field.max_length, field.allow_blank
        if len(field.validators) != 2 + (limit is not None):  # max length, no NUL, no surrogate: DRF's own only
            return None
        return lambda v: (type(v) is str and v == v.strip() and (blank or v != "")
                          and (limit is None or len(v) <= limit) and "\x00" not in v and _no_surrogate(v))
    if kind is fields.IntegerField and field.max_value is not None and field.min_value is not None:
        low, high, null = field.min_value, field.max_value, field.allow_null
        if len(field.validators) != 2:
            return None
        return lambda v: (v is None and null) or (type(v) is int and low <= v <= high)
    if kind is fields.BooleanField and not field.allow_null and not field.validators:
        return lambda v: type(v) is bool
    return None


def _no_surrogate(value: str) -> bool:
    """DRF's ProhibitSurrogateCharactersValidator: no code point of U+D800-U+DFFF (JSON can carry them escaped)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
