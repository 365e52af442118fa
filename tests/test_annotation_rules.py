"""Trivial-filter rules (Django-free): cardinality per side x category, the any-question rule (the type rule:
test_annotation_type_rule.py)."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.rules import HEAD, TAIL, cardinality_by_question, cardinality_rule, parse_rules

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
