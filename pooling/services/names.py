"""Names users give to knowledge graphs, samples, systems and pools: checked before anything is written.

Names appear in command lines (``KG/SAMPLE`` references), URLs and storage paths (``kg/<id>-<name>/``), so they
are slugs: ASCII letters, digits, ``-`` and ``_`` (Django's ``validate_slug``, which the admin applies to these
SlugFields), starting with a letter or a digit (never an option-like ``-x``, never ``.`` or ``/``), and no longer
than the model field. Pool names may also hold ``+`` (the default ``depth10-transe+distmult``).
"""
from __future__ import annotations

import re

from pooling.engine.userfiles import shown

_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_POOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*\Z")


def _max_length(model_name: str) -> int:
    from pooling import models

    return getattr(models, model_name)._meta.get_field("name").max_length


def checked_name(kind: str, name: str, error: type[Exception]) -> str:
    """``name`` when it is a valid name of a ``kind`` ("knowledge graph", "sample", "system", "pool"), else
    ``error`` with a one-line message saying what is allowed."""
    model, pattern, allowed = {
        "knowledge graph": ("KnowledgeGraph", _SLUG, "letters, digits, - and _"),
        "sample": ("Sample", _SLUG, "letters, digits, - and _"),
        "system": ("System", _SLUG, "letters, digits, - and _"),
        "pool": ("Pool", _POOL, "letters, digits, -, _ and +"),
    }[kind]
    limit = _max_length(model)
    if not isinstance(name, str) or not pattern.match(name):
        raise error(f"{kind} name {shown(name)} must be a slug: {allowed}, starting with a letter or a digit")
    if len(name) > limit:
        raise error(f"{kind} name {shown(name)} is {len(name)} characters long; at most {limit} are allowed")
    return name


def fit(text: str, model_name: str, field: str) -> str:
    """``text`` cut to the length of a free-text column (e.g. the source path a KG or pool came from)."""
    from pooling import models

    return text[: getattr(models, model_name)._meta.get_field(field).max_length]
