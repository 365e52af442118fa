"""Trivial-filter rules (Django-free): cardinality per side x category, the any-question rule (the type rule:
test_annotation_type_rule.py)."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.rules import (
    HEAD,
    TAIL,
    cardinality_by_question,
    cardinality_rule,
    irreflexive_relations,
    parse_rules,
    reflexive_rule,
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


def test_parse_rules():
    assert parse_rules("type,cardinality") == ("type", "cardinality")
    assert parse_rules(None) == ("type", "cardinality", "reflexive")
    with pytest.raises(ValueError, match="unknown rule"):
        parse_rules("types")


def test_sides_are_the_stored_question_sides():
    # pooling.models Question.Side stores HEAD = 0, TAIL = 1; the filter compares these numbers with it
    assert (HEAD, TAIL) == (0, 1)


def test_cardinality_with_no_questions_is_empty():
    assert cardinality_by_question(np.array([], dtype=np.int64), np.array([], dtype=np.int64), CATEGORIES).tolist() == []
    entries = np.array([[0, 0, 1]])
    assert cardinality_rule(entries, np.array([], dtype=np.int64), np.array([], dtype=np.int64), CATEGORIES).tolist() == [False]


def test_irreflexive_relations_from_train_self_loops():
    # relation 0 has the self-loop (2, 0, 2) in train; relations 1 and 2 relate no entity to itself
    train = np.array([[2, 0, 2], [1, 1, 2], [2, 1, 1]])
    assert irreflexive_relations(train, 3).tolist() == [False, True, True]


def test_reflexive_rule_marks_self_loops_of_irreflexive_relations_only():
    train = np.array([[0, 0, 0], [1, 1, 2]])
    entries = np.array([
        [3, 0, 3],  # self-loop, but relation 0 has one in train: kept
        [4, 1, 4],  # self-loop of irreflexive relation 1: ruled out
        [4, 1, 5],  # not a self-loop: kept
        [6, 2, 6],  # relation 2 is beyond num_relations=2 (never in train): irreflexive, ruled out
        [0, 5, 0],  # relation 5, larger than any entity id too: ruled out
    ])
    assert reflexive_rule(entries, train, 2).tolist() == [False, True, False, True, True]
    assert reflexive_rule(np.array([[0, 5, 0]]), train, 2).tolist() == [True]
    assert reflexive_rule(np.zeros((0, 3), dtype=np.int64), train, 2).tolist() == []


def test_parse_rules_lists_spaces_duplicates_and_errors():
    assert parse_rules(" reflexive , type,, reflexive ") == ("reflexive", "type")
    assert parse_rules(["cardinality", " type "]) == ("cardinality", "type")
    with pytest.raises(ValueError) as error:
        parse_rules("type,types,kind")
    assert str(error.value) == "unknown rule(s) types, kind; known: type, cardinality, reflexive"
    with pytest.raises(ValueError) as error:
        parse_rules(" , ")
    assert str(error.value) == "unknown rule(s) (none given); known: type, cardinality, reflexive"
