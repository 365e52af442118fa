"""Per-relation question templates (Django-free): a readable default for every relation, validation, rendering.

A template is a string with the placeholders ``{head}`` and ``{tail}`` (the entity names), e.g.
``Is {head}'s nationality {tail}?``. Literal braces are written ``{{`` and ``}}``.
"""
from __future__ import annotations

import re
import string

PLACEHOLDERS = ("head", "tail")

# Verb-like last segments read better as verbs than as possessives.
_VERBS = {
    "contains": "Does {head} contain {tail}?",
    "partially_contains": "Does {head} partially contain {tail}?",
    "adjoins": "Does {head} adjoin {tail}?",
    "split_to": "Did {head} split into {tail}?",
}
_SINGULAR_ENDINGS = ("ss", "us", "is", "ics", "news", "series")


class TemplateError(ValueError):
    """The template text is not usable; the message says why."""


def _words(segment: str) -> str:
    segment = re.sub(r"_s$", "", segment.strip("_"))  # Freebase marks plural mediator properties with _s
    return re.sub(r"[_\s]+", " ", segment).strip()


def _is_plural(words: str) -> bool:
    last = words.split(" ")[-1] if words else ""
    return last.endswith("s") and not last.endswith(_SINGULAR_ENDINGS) and len(last) > 2


def _simple(words: str, raw: str) -> str:
    if raw in _VERBS:
        return _VERBS[raw]
    if words.endswith(" by") or words.endswith(" of") or words.endswith(" in") or words in ("isa", "is a"):
        return "Is {head} " + ("a" if words in ("isa", "is a") else words) + " {tail}?"
    if _is_plural(words):
        return "Is {tail} one of {head}'s " + words + "?"
    return "Is {head}'s " + words + " {tail}?"


def default_template(key: str, text: str = "") -> str:
    """A readable default template for a relation from its key (a Freebase path) or its text.

    ``/people/person/nationality`` -> ``Is {head}'s nationality {tail}?``;
    ``/people/person/places_lived./people/place_lived/location`` -> ``Is {tail} the location in {head}'s places
    lived?``; relations without a path use ``text`` (e.g. CoDEx labels) or the key itself.
    """
    key = key.strip()
    if key.startswith("/") and key.count("/") >= 2:
        parts = [part for part in key.split("./")]
        first = parts[0].rstrip("/").split("/")[-1]
        if len(parts) == 1:
            return _simple(_words(first), first)
        last = parts[-1].rstrip("/").split("/")[-1]
        p1, p2 = _words(first), _words(last)
        if p1 == p2 or p1.rstrip("s") == p2.rstrip("s"):
            return "Is {tail} " + ("one of the " + p1 if _is_plural(p1) else "a " + p2) + " of {head}?"
        return "Is {tail} the " + p2 + " in {head}'s " + p1 + "?"
    words = _words(text) if text.strip() else _words(key.replace(".", " "))
    return _simple(words or key, (text or key).strip().replace(" ", "_"))


def check_template(text: str) -> str:
    """``text`` stripped, or TemplateError: unknown placeholder, missing {head}/{tail}, unbalanced braces."""
    text = (text or "").strip()
    if not text:
        raise TemplateError("the template is empty")
    try:
        fields = [field for _literal, field, _spec, _conv in string.Formatter().parse(text) if field is not None]
    except ValueError as exc:
        raise TemplateError(f"bad braces in the template: {exc} (write {{{{ and }}}} for literal braces)") from None
    unknown = sorted({field for field in fields if field not in PLACEHOLDERS})
    if unknown:
        raise TemplateError(f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}; use {{head}} and {{tail}}")
    missing = [name for name in PLACEHOLDERS if name not in fields]
    if missing:
        raise TemplateError(f"the template must contain {' and '.join('{' + m + '}' for m in missing)}")
    return text


def render(text: str, head: str, tail: str) -> str:
    """The question for one triple: the template with the entity names filled in."""
    return check_template(text).format(head=head, tail=tail)
