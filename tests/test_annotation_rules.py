"""Trivial-filter rules (Django-free): cardinality per side x category, the any-question rule, type rules."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.rules import (
    HEAD,
    TAIL,
    cardinality_by_question,
    cardinality_rule,
    parse_rules,
    type_rule,
    types_from_entity_data,
    types_from_relation_signatures,
    types_from_roles,
)

CATEGORIES = ["1-1", "1-N", "N-1", "N-N"]  # relation r has category CATEGORIES[r]


@pytest.mark.parametrize(
    ("relation", "side", "fires"),
    [
        (0, HEAD, True), (0, TAIL, True),  # 1-1: both questions have one answer
        (1, HEAD, True), (1, TAIL, False),  # 1-N: one head per tail
        (2, HEAD, False), (2, TAIL, True),  # N-1: one tail per head
        (3, HEAD, False), (3, TAIL, False),  # N-N: never
    ],
)
def test_cardinality_side_by_category(relation, side, fires):
    assert cardinality_by_question(np.array([relation]), np.array([side]), CATEGORIES).tolist() == [fires]


def test_a_triple_any_of_whose_questions_rules_it_out_is_negative():
    entries = np.array([[0, 1, 5], [0, 1, 6], [0, 3, 7], [2, 2, 8]])
    # entry 0 answers the head question (fires on 1-N) and the tail question (does not): negative
    # entry 1 answers only the tail question of the 1-N relation: kept
    # entry 2 (N-N) answers both: kept; entry 3 answers no question at all: kept
    entry_of = np.array([0, 0, 1, 2, 2])
    sides = np.array([HEAD, TAIL, TAIL, HEAD, TAIL])
    assert cardinality_rule(entries, entry_of, sides, CATEGORIES).tolist() == [True, False, False, False]


def test_type_rule_with_declared_signatures_and_types_inferred_from_train():
    # relation 0: person -> country (nationality); relation 1: film -> person (directed_by)
    train = np.array([[0, 0, 10], [20, 1, 1]])  # e0 is a person (head of r0), e1 a person (tail of r1)
    table = types_from_relation_signatures(train, 30, ["person", "film"], ["country", "person"])
    assert table.entity_types[0] == {"person"} and table.entity_types[10] == {"country"} and table.entity_types[20] == {"film"}
    entries = np.array([
        [1, 0, 10],  # person nationality country: fine
        [20, 0, 10],  # a film with a nationality: head inconsistent
        [0, 0, 20],  # nationality = a film: tail inconsistent
        [5, 0, 10],  # e5 has no known type: never ruled out
    ])
    assert type_rule(entries, table).tolist() == [False, True, True, False]


def test_type_rule_with_entity_types_from_the_dataset():
    # CoDEx-like: entity types given, relation domains/ranges observed on train heads/tails
    types = [["human"], ["human"], ["country"], ["city"], []]
    train = np.array([[0, 0, 2]])  # relation 0 (citizenship): human -> country
    table = types_from_entity_data(train, types, 1)
    entries = np.array([[1, 0, 2], [3, 0, 2], [1, 0, 3], [4, 0, 2]])
    assert type_rule(entries, table).tolist() == [False, True, True, False]


def test_type_rule_without_any_type_data_uses_observed_relations():
    train = np.array([[0, 0, 1], [2, 1, 3]])
    table = types_from_roles(train, 5, 2)
    entries = np.array([[0, 0, 1], [2, 0, 1], [0, 0, 3], [4, 0, 1]])
    # e2 was never a head of r0; e3 never a tail of r0; e4 is unseen (unknown, kept)
    assert type_rule(entries, table).tolist() == [False, True, True, False]


def test_parse_rules():
    assert parse_rules("type,cardinality") == ("type", "cardinality")
    assert parse_rules(None) == ("type", "cardinality")
    with pytest.raises(ValueError, match="unknown rule"):
        parse_rules("types")
