"""Trivial-filter rules (SPEC 4.1), Django-free and numpy-based.

Entries are pool triples as an int64 (n, 3) array of (head, relation, tail) indices. Every rule returns a
boolean mask: True = the entry is almost surely false and is labelled N automatically. The cardinality and
reflexive rules are here; the type rule, with its type models, in ``annotation.lib.type_rule``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


HEAD = 0  # a head question (?, r, anchor): the entry's head is the candidate
TAIL = 1  # a tail question (anchor, r, ?): the entry's tail is the candidate

RULES = ("type", "cardinality", "reflexive")

# Categories on which a question has a single answer: a pooled candidate cannot be a second answer.
SINGLE_ANSWER = {HEAD: ("1-1", "1-N"), TAIL: ("1-1", "N-1")}


def cardinality_by_question(relations: np.ndarray, sides: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """For questions (relation, side): True where the relation's category leaves that question one answer.

    Head questions on 1-1 / 1-N relations and tail questions on 1-1 / N-1 relations.
    """
    categories = np.asarray(categories)
    cat = categories[np.asarray(relations, dtype=np.int64)] if len(relations) else np.zeros(0, dtype=categories.dtype)
    sides = np.asarray(sides)
    head_single = np.isin(cat, SINGLE_ANSWER[HEAD]) & (sides == HEAD)
    tail_single = np.isin(cat, SINGLE_ANSWER[TAIL]) & (sides == TAIL)
    return head_single | tail_single


def cardinality_rule(
    entries: np.ndarray, entry_of: np.ndarray, sides: np.ndarray, categories: Sequence[str]
) -> np.ndarray:
    """Mask over ``entries``: True when ANY question the entry answers rules it out.

    ``entry_of[i]`` / ``sides[i]`` describe the i-th (entry, question) pair: the entry's row and the side of one
    question it answers (an entry answering no question is never ruled out).
    """
    entries = np.asarray(entries, dtype=np.int64).reshape(-1, 3)
    entry_of = np.asarray(entry_of, dtype=np.int64)
    fired = cardinality_by_question(entries[entry_of, 1], sides, categories)
    mask = np.zeros(len(entries), dtype=bool)
    mask[entry_of[fired]] = True
    return mask


def irreflexive_relations(train: np.ndarray, num_relations: int) -> np.ndarray:
    """Bool per relation index: True where train never relates an entity to itself (no (e, r, e))."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    irreflexive = np.ones(num_relations, dtype=bool)
    irreflexive[train[train[:, 0] == train[:, 2], 1]] = False
    return irreflexive


def reflexive_rule(entries: np.ndarray, train: np.ndarray, num_relations: int) -> np.ndarray:
    """Mask over ``entries``: True for a self-loop (e, r, e) of a relation that train never relates an entity
    to itself with ("Is virus location of virus?"); relations with a self-loop in train keep theirs."""
    entries = np.asarray(entries, dtype=np.int64).reshape(-1, 3)
    irreflexive = irreflexive_relations(train, max(num_relations, int(entries[:, 1].max(initial=-1)) + 1))
    return (entries[:, 0] == entries[:, 2]) & irreflexive[entries[:, 1]]


def parse_rules(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"type,cardinality"`` -> ("type", "cardinality"); ValueError names unknown rules. None -> all rules."""
    if text is None:
        return RULES
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in RULES]
    if unknown or not names:
        raise ValueError(f"unknown rule(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(RULES)}")
    return tuple(dict.fromkeys(names))
