"""Trivial-filter rules (SPEC 4.1), Django-free and numpy-based.

Entries are pool triples as an int64 (n, 3) array of (head, relation, tail) indices. Every rule returns a
boolean mask: True = the entry is almost surely false and is labelled N automatically.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

HEAD = 0  # a head question (?, r, anchor): the entry's head is the candidate
TAIL = 1  # a tail question (anchor, r, ?): the entry's tail is the candidate

RULES = ("type", "cardinality")

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


@dataclass(frozen=True)
class TypeTable:
    """Types of every entity, and the allowed types of each relation's heads (domain) and tails (range).

    An empty set means "unknown": an unknown entity or an unconstrained relation side never fires the rule.
    """

    entity_types: list[frozenset[str]]
    domains: list[frozenset[str]]
    ranges: list[frozenset[str]]
    source: str  # where the types came from, for reports


def type_rule(entries: np.ndarray, table: TypeTable) -> np.ndarray:
    """Mask: the head's known types miss the relation's domain, or the tail's known types miss its range."""
    entries = np.asarray(entries, dtype=np.int64).reshape(-1, 3)
    mask = np.zeros(len(entries), dtype=bool)
    for i, (h, r, t) in enumerate(entries.tolist()):
        mask[i] = _inconsistent(table.entity_types[h], table.domains[r]) or _inconsistent(
            table.entity_types[t], table.ranges[r]
        )
    return mask


def _inconsistent(types: frozenset[str], allowed: frozenset[str]) -> bool:
    return bool(types) and bool(allowed) and types.isdisjoint(allowed)


def types_from_relation_signatures(
    train: np.ndarray, num_entities: int, domain: Sequence[str], range_: Sequence[str]
) -> TypeTable:
    """Declared relation domain/range types, entity types inferred from train: an entity has type X when it
    is the head of a relation with domain X or the tail of a relation with range X (FB15k-237)."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    types: list[set[str]] = [set() for _ in range(num_entities)]
    for r in np.unique(train[:, 1]).tolist():
        rows = train[train[:, 1] == r]
        if domain[r]:
            for h in np.unique(rows[:, 0]).tolist():
                types[h].add(domain[r])
        if range_[r]:
            for t in np.unique(rows[:, 2]).tolist():
                types[t].add(range_[r])
    return TypeTable(
        [frozenset(s) for s in types],
        [frozenset([d]) if d else frozenset() for d in domain],
        [frozenset([x]) if x else frozenset() for x in range_],
        "relation domain/range types; entity types inferred from train",
    )


def types_from_entity_data(
    train: np.ndarray,
    entity_types: Sequence[Iterable[str]],
    num_relations: int,
    domain: Sequence[str] | None = None,
    range_: Sequence[str] | None = None,
) -> TypeTable:
    """Entity types from the dataset (e.g. CoDEx Wikidata types). A relation's domain (range) is its declared
    type when given, else every type observed on its train heads (tails)."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    ent = [frozenset(types) for types in entity_types]
    domains: list[set[str]] = [set() for _ in range(num_relations)]
    ranges: list[set[str]] = [set() for _ in range(num_relations)]
    for h, r, t in np.unique(train, axis=0).tolist() if len(train) else []:
        domains[r] |= ent[h]
        ranges[r] |= ent[t]
    if domain is not None:
        domains = [{domain[r]} if domain[r] else domains[r] for r in range(num_relations)]
    if range_ is not None:
        ranges = [{range_[r]} if range_[r] else ranges[r] for r in range(num_relations)]
    return TypeTable(ent, [frozenset(s) for s in domains], [frozenset(s) for s in ranges], "entity types from the dataset")


def types_from_roles(train: np.ndarray, num_entities: int, num_relations: int) -> TypeTable:
    """No type data at all: an entity's "types" are the relations (and sides) it is observed with in train;
    relation r accepts as head only entities seen as a head of r, as tail only those seen as a tail of r."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    types: list[set[str]] = [set() for _ in range(num_entities)]
    for h, r in np.unique(train[:, [0, 1]], axis=0).tolist() if len(train) else []:
        types[h].add(f"h:{r}")
    for t, r in np.unique(train[:, [2, 1]], axis=0).tolist() if len(train) else []:
        types[t].add(f"t:{r}")
    return TypeTable(
        [frozenset(s) for s in types],
        [frozenset([f"h:{r}"]) for r in range(num_relations)],
        [frozenset([f"t:{r}"]) for r in range(num_relations)],
        "no type data: relations each entity is observed with in train",
    )


def parse_rules(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"type,cardinality"`` -> ("type", "cardinality"); ValueError names unknown rules. None -> all rules."""
    if text is None:
        return RULES
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in RULES]
    if unknown or not names:
        raise ValueError(f"unknown rule(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(RULES)}")
    return tuple(dict.fromkeys(names))
