"""Per-relation question templates (Django-free): a readable default for every relation, validation, rendering.

A template is a string with the placeholders ``{head}`` and ``{tail}`` (the entity names, both required) and,
optionally, ``{relation}`` (the relation's text), e.g. ``Is {head}'s nationality {tail}?``. Literal braces are
written ``{{`` and ``}}``. Nothing else between braces is accepted: no format spec (``{head:>20}``), no
conversion (``{head!r}``), no attribute or index (``{head.x}``, ``{head[0]}``), no other name. Templates are
never passed to ``str.format``: :func:`parse` splits them into literal text and placeholder names and
:func:`render` joins the pieces, so a template cannot make a question longer than its text plus the names.
"""
from __future__ import annotations

import re

PLACEHOLDERS = ("head", "tail", "relation")
REQUIRED = ("head", "tail")
MAX_TEMPLATE_LENGTH = 500  # QuestionTemplate.text's max_length
MAX_PLACEHOLDERS = 6  # e.g. "Is {head} ({relation}) {tail}, i.e. ..." never needs more
MAX_NAME_LENGTH = 200  # an entity or relation name longer than this is cut (with an ellipsis) in a question
MAX_QUESTION_LENGTH = MAX_TEMPLATE_LENGTH + MAX_PLACEHOLDERS * MAX_NAME_LENGTH

# ``{{``, ``}}``, one ``{...}`` without braces inside, or a brace left over.
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
Piece = tuple[bool, str]  # (is a placeholder, literal text or placeholder name)

# Verb-like last segments read better as verbs than as possessives.
_VERBS = {
    "contains": "Does {head} contain {tail}?",
    "partially_contains": "Does {head} partially contain {tail}?",
    "adjoins": "Does {head} adjoin {tail}?",
    "split_to": "Did {head} split into {tail}?",
}
_SINGULAR_ENDINGS = ("ss", "us", "is", "ics", "news", "series")
# Verbs that name relations (UMLS's 25, WN18RR's "has part", CoDEx's, and common ones elsewhere).
_VERB_WORDS = frozenset("""
    activates affects analyzes assesses binds borders carries causes co-occurs complicates consists contains creates
    depicts describes diagnoses disrupts employs encodes exhibits follows has includes indicates influences inhibits
    interacts interconnects manages measures occurs owns performs plays practices precedes prevents produces regulates
    requires shares speaks studies supports surrounds targets treats uses wins""".split())
# A relation named by a phrase ending in one of these reads "Is {head} <phrase> {tail}?" ("associated with").
_PREPOSITIONS = (" by", " of", " in", " with", " to", " for", " from", " on", " at", " into")


class TemplateError(ValueError):
    """The template text is not usable; the message says why."""


def _words(segment: str) -> str:
    segment = re.sub(r"_s$", "", segment.strip("_"))  # Freebase marks plural mediator properties with _s
    return re.sub(r"[_\s]+", " ", segment).strip()


def _is_plural(words: str) -> bool:
    last = words.split(" ")[-1] if words else ""
    return last.endswith("s") and not last.endswith(_SINGULAR_ENDINGS) and len(last) > 2


def _base_form(verb: str) -> str:
    """The base form of a verb of ``_VERB_WORDS``: causes -> cause, carries -> carry, assesses -> assess."""
    if verb == "has":
        return "have"
    if verb.endswith("sses"):  # the endings of _VERB_WORDS' verbs only: add "ches", "xes"... with such a verb
        return verb[:-2]
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    return verb[:-1]


def _verb_phrase(words: str) -> bool:
    """A relation named by a verb in the third person singular, alone or with a few words after it ("causes",
    "interacts with", "carries out"), as in UMLS, WN18RR and some CoDEx labels. The verbs are listed: a word's ending
    cannot tell them from plural nouns ("treaties" and "students" in Nations, "symptoms" in CoDEx)."""
    return words.split(" ")[0] in _VERB_WORDS and re.fullmatch(r"[a-z-]+( [a-z-]+){0,3}", words) is not None


def _simple(words: str, raw: str, *, verbs: bool = False) -> str:
    if raw in _VERBS:
        return _VERBS[raw]
    if verbs and _verb_phrase(words):  # "Is {tail} one of {head}'s causes?" asked the triple backwards
        first, _, rest = words.partition(" ")
        return "Does {head} " + " ".join(filter(None, (_base_form(first), rest))) + " {tail}?"
    if words.endswith(_PREPOSITIONS) or words in ("isa", "is a"):
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
    return _simple(words or key, (text or key).strip().replace(" ", "_"), verbs=True)


def parse(text: str) -> list[Piece]:
    """``text`` as (is_placeholder, value) pieces, or TemplateError naming the first offending part."""
    if len(text) > MAX_TEMPLATE_LENGTH:
        raise TemplateError(f"the template is {len(text)} characters long; at most {MAX_TEMPLATE_LENGTH}")
    pieces: list[Piece] = []
    literal: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        literal.append(text[position:match.start()])
        position = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        if token in ("{", "}"):
            raise TemplateError(f"bad braces in the template: the {token!r} at character {match.start() + 1} is not "
                                "part of a plain placeholder (braces do not nest; write {{ and }} for literal braces)")
        name = match.group(1)
        if name not in PLACEHOLDERS:
            usable = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            if name.strip() in PLACEHOLDERS or re.match(r"\s*(head|tail|relation)\b", name):
                raise TemplateError(f"{token} is not a plain placeholder: no format spec, conversion, attribute or "
                                    f"index is allowed (use {usable})")
            raise TemplateError(f"unknown placeholder {token}; use {usable}")
        if literal:
            pieces.append((False, "".join(literal)))
            literal = []
        pieces.append((True, name))
    literal.append(text[position:])
    if "".join(literal):
        pieces.append((False, "".join(literal)))
    names = [value for is_name, value in pieces if is_name]
    if len(names) > MAX_PLACEHOLDERS:
        raise TemplateError(f"the template has {len(names)} placeholders; at most {MAX_PLACEHOLDERS}")
    missing = [name for name in REQUIRED if name not in names]
    if missing:
        raise TemplateError(f"the template must contain {' and '.join('{' + m + '}' for m in missing)}")
    return pieces


def check_template(text: str) -> str:
    """``text`` stripped, or TemplateError: empty, too long, unbalanced braces, anything between braces but
    a plain ``{head}``, ``{tail}`` or ``{relation}``, missing ``{head}``/``{tail}``."""
    text = (text or "").strip()
    if not text:
        raise TemplateError("the template is empty")
    parse(text)
    return text


def cut_name(name: str) -> str:
    """``name`` cut to MAX_NAME_LENGTH characters (an ellipsis marks the cut)."""
    return name if len(name) <= MAX_NAME_LENGTH else name[: MAX_NAME_LENGTH - 1] + "\u2026"


def render(text: str, head: str, tail: str, relation: str = "") -> str:
    """The question for one triple: the template with the names filled in (each cut at MAX_NAME_LENGTH, so
    the question is at most MAX_QUESTION_LENGTH characters). TemplateError when the template is unusable."""
    values = {"head": cut_name(head), "tail": cut_name(tail), "relation": cut_name(relation)}
    return "".join(values[value] if is_name else value for is_name, value in parse(check_template(text)))
