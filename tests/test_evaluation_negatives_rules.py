"""Negatives for triple classification (evaluation.core.negatives), the rules the other negatives tests leave open
(issue 19, mutation testing): SideTypes on entities with several types (the side matrix, consistency, candidates)
by hand, every refusal's message whole, corruption's edges (which side is replaced first, a side without a
replacement, the listing after the random draws, known triples outside the id ranges, per_positive 0, uniform
draws), the type-file readers' edges. Expected values are worked out by hand from the definitions."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.core import negatives as negatives_module
from evaluation.core.negatives import (
    HEAD_COLUMN,
    SOURCES,
    TAIL_COLUMN,
    Negatives,
    SideTypes,
    corrupt,
    entity_types_from_lists,
    labelled_negatives,
    read_entity_types_json,
    read_negatives_file,
    read_signature_types,
    type_consistency,
)
from pooling.engine.kgfiles import KGFormatError
from tests._raises_support import whole

# entity types: 0 {0}, 1 {3, 0}, 2 {1}, 3 {2, 1}, 4 {2}, 5 none; train: (1, r0, 3) only, 2 relations
TYPES = [np.array([0]), np.array([3, 0]), np.array([1]), np.array([2, 1]), np.array([2]), np.zeros(0, dtype=np.int64)]
TRAIN = np.array([[1, 0, 3]])

# the tiny KG of test_evaluation_classification_negatives.py: 0, 1 persons; 2, 3 cities; 4 a film; 5 untyped
PERSON, CITY, FILM = 0, 1, 2
KG_TYPES = [np.array([PERSON]), np.array([PERSON]), np.array([CITY]), np.array([CITY]), np.array([FILM]),
            np.zeros(0, dtype=np.int64)]
KG_TRAIN = np.array([[0, 0, 2], [1, 0, 3], [0, 1, 4]])


def test_public_names() -> None:
    assert SOURCES == ("judged", "dataset", "corrupted-typed", "corrupted-random")
    assert (HEAD_COLUMN, TAIL_COLUMN) == (0, 2)
    assert sorted(negatives_module.__all__) == sorted([
        "SOURCES", "HEAD_COLUMN", "TAIL_COLUMN", "Negatives", "corrupt", "type_consistency", "labelled_negatives",
        "SideTypes", "entity_types_from_lists", "read_entity_types_json", "read_signature_types",
        "read_negatives_file"])


def test_negatives_record() -> None:
    negatives = Negatives(np.array([[0, 1, 2], [3, 1, 2]]), np.array([True, False]), "judged")
    assert len(negatives) == 2 and negatives.replaced is None and negatives.positive is None
    with pytest.raises(AttributeError):
        negatives.source = "dataset"  # frozen


def test_side_types_by_hand() -> None:
    side_types = SideTypes(TRAIN, TYPES, 2)
    assert (side_types.num_entities, side_types.num_relations, side_types.num_types) == (6, 2, 4)
    # side 0 (heads of r0): entity 1's types {0, 3}; side 1 (tails of r0): entity 3's {1, 2}; r1 unseen
    assert side_types.side_types.tolist() == [[True, False, False, True], [False, True, True, False],
                                              [False] * 4, [False] * 4]
    entities = np.array([0, 2, 4, 2, 0, 5, 5, 3, 1, 3, 1])
    sides = np.array([0, 0, 1, 1, 1, 0, 1, 0, 1, 2, 0])
    assert side_types.consistent(entities, sides).tolist() == [True, False, True, True, False, False, False, False,
                                                               False, False, True]
    assert side_types.consistent(np.zeros(0, int), np.zeros(0, int)).shape == (0,)
    assert side_types.candidates(0).tolist() == [0, 1]
    assert side_types.candidates(1).tolist() == [2, 3, 4]
    assert side_types.candidates(2).tolist() == [] and side_types.candidates(3).tolist() == []
    assert side_types.candidates(1) is side_types.candidates(1)  # cached
    # the same entity on two sides, several triples per side
    side_types = SideTypes(np.array([[1, 0, 3], [3, 1, 1], [0, 0, 4], [1, 0, 3]]), TYPES, 3)
    assert side_types.side_types.tolist() == [[True, False, False, True], [False, True, True, False],
                                              [False, True, True, False], [True, False, False, True],
                                              [False] * 4, [False] * 4]
    assert side_types.candidates(2).tolist() == [2, 3, 4] and side_types.candidates(3).tolist() == [0, 1]


def test_side_types_of_a_single_entity() -> None:
    # one entity (id 0, type 0) heading and tailing relation 1 of 2: sides 2 and 3 have type 0, sides 0 and 1 none
    side_types = SideTypes(np.array([[0, 1, 0]]), [np.array([0])], 2)
    assert side_types.side_types.tolist() == [[False], [False], [True], [True]]
    assert side_types.consistent(np.zeros(4, int), np.arange(4)).tolist() == [False, False, True, True]
    assert side_types.candidates(3).tolist() == [0] and side_types.candidates(0).tolist() == []


def test_side_types_of_consecutive_entities_with_several_types() -> None:
    # entity 1 {1, 2} heads relation 0, entity 2 {3, 4} tails it: side 0 has types 1, 2 and side 1 types 3, 4
    side_types = SideTypes(np.array([[1, 0, 2]]), [np.array([0]), np.array([1, 2]), np.array([3, 4]),
                                                   np.array([5])], 1)
    entities, sides = np.array([1, 1, 2, 2, 0, 3, 0, 3]), np.array([0, 1, 1, 0, 0, 1, 1, 0])
    assert side_types.consistent(entities, sides).tolist() == [True, False, True, False, False, False, False, False]
    assert side_types.candidates(0).tolist() == [1] and side_types.candidates(1).tolist() == [2]


def test_side_types_without_entities_or_train() -> None:
    side_types = SideTypes(np.zeros((0, 3)), [], 2)
    assert (side_types.num_entities, side_types.num_types) == (0, 0) and side_types.side_types.shape == (4, 0)
    assert side_types.candidates(0).tolist() == []
    side_types = SideTypes(np.zeros((0, 3)), TYPES, 1)
    assert side_types.side_types.shape == (2, 4) and not side_types.side_types.any()
    assert not side_types.consistent(np.arange(6), np.zeros(6, int)).any()


def test_side_types_refusals() -> None:
    for train, relations in (([[1, 0, 6]], 2), ([[6, 0, 1]], 2), ([[1, 2, 3]], 2)):
        with pytest.raises(ValueError, match=whole("train triples hold ids beyond the entity types / relations given")):
            SideTypes(np.array(train), TYPES, relations)
    with pytest.raises(ValueError, match=whole("type ids must be >= 0")):
        SideTypes(np.array([[0, 0, 1]]), [np.array([0]), np.array([-1])], 1)
    side_types = SideTypes(TRAIN, TYPES, 2)
    for entities, sides in (([6], [0]), ([0], [4]), ([0, 6], [0, 0])):
        with pytest.raises(ValueError, match=whole("entity or relation ids beyond the entity types / relations given")):
            side_types.consistent(np.array(entities), np.array(sides))
    with pytest.raises(ValueError, match=whole("train triples must be an (n, 3) array of (head, relation, tail) ids")):
        SideTypes(np.array([[1, 0]]), TYPES, 2)
    with pytest.raises(ValueError, match=whole("train triples hold negative ids")):
        SideTypes(np.array([[1, -1, 3]]), TYPES, 2)


def test_type_consistency_edges() -> None:
    triples = np.array([[0, 0, 4], [2, 0, 3], [1, 1, 1]])
    # head / tail consistent: (0, r0, 4): yes / yes; (2, r0, 3): no / yes; (1, r1, 1): r1 unseen: no / no
    assert type_consistency(triples, TRAIN, TYPES).tolist() == [True, False, False]
    assert type_consistency(triples, TRAIN, TYPES, replaced=np.array([2, 2, 0])).tolist() == [True, True, False]
    assert type_consistency(triples, TRAIN, TYPES, replaced=[0, 0, 2]).tolist() == [True, False, False]
    prebuilt = SideTypes(TRAIN, TYPES, 2)
    assert type_consistency(triples, None, prebuilt).tolist() == [True, False, False]
    assert type_consistency(np.zeros((0, 3)), np.zeros((0, 3)), TYPES).shape == (0,)
    assert type_consistency(np.zeros((0, 3)), TRAIN, TYPES, replaced=np.zeros(0)).shape == (0,)
    for replaced in ([0, 1, 2], [0, 2], [0, 2, 2, 0]):
        with pytest.raises(ValueError, match=whole("replaced must give 0 (head) or 2 (tail) for every triple")):
            type_consistency(triples, TRAIN, TYPES, replaced=np.array(replaced))
    # relation ids above every entity id: the relation column sets the number of sides
    assert type_consistency(np.array([[1, 4, 0], [0, 5, 1]]), np.array([[1, 4, 0]]), TYPES).tolist() == [True, False]
    # relation 2 only in the triples: the sides counted from them too; num_relations given: that many
    assert type_consistency(np.array([[0, 2, 3]]), TRAIN, TYPES).tolist() == [False]
    with pytest.raises(ValueError, match=whole("entity or relation ids beyond the entity types / relations given")):
        type_consistency(np.array([[0, 2, 3]]), TRAIN, TYPES, num_relations=2)
    with pytest.raises(ValueError, match=whole("triples must be an (n, 3) array of (head, relation, tail) ids")):
        type_consistency(np.array([0, 0, 3, 1]), TRAIN, TYPES)
    with pytest.raises(ValueError, match=whole("triples hold negative ids")):
        type_consistency(np.array([[0, 0, -3]]), TRAIN, TYPES)


def test_labelled_negatives_edges() -> None:
    with pytest.raises(ValueError, match=whole("labelled negatives come from 'judged' or 'dataset', not 'corrupted-typed'")):
        labelled_negatives(np.array([[1, 0, 2]]), "corrupted-typed")
    negatives = labelled_negatives(np.array([[0, 0, 4], [2, 0, 3]]), "dataset", TRAIN, TYPES)
    assert negatives.source == "dataset" and negatives.consistent.tolist() == [True, False]
    assert negatives.replaced is None and negatives.positive is None
    # entity types without train: no side has a type, nothing is consistent
    assert labelled_negatives(np.array([[0, 0, 4], [1, 0, 0]]), "judged", None, TYPES).consistent.tolist() == [
        False, False]
    empty = labelled_negatives([], "judged")
    assert empty.triples.shape == (0, 3) and empty.consistent.shape == (0,) and empty.consistent.dtype == bool


def test_corrupt_refusals() -> None:
    positives = np.array([[0, 0, 2]])
    cases = [
        (dict(num_entities=6, per_positive=-1), "per_positive must be >= 0"),
        (dict(num_entities=6, head_probability=1.5), "head_probability must lie in [0, 1]"),
        (dict(num_entities=6, head_probability=-0.01), "head_probability must lie in [0, 1]"),
        (dict(num_entities=2), "positives hold entity ids beyond 0..1"),
        (dict(num_entities=2, positives=np.array([[2, 0, 1]])), "positives hold entity ids beyond 0..1"),
        (dict(num_entities=6, type_consistent=True), "type-consistent corruption needs entity types"),
        (dict(num_entities=6, entity_types=KG_TYPES),
         "entity types need the train triples that define each relation side's types"),
        (dict(num_entities=7, entity_types=KG_TYPES, train_triples=KG_TRAIN), "entity types cover 6 entities, not 7"),
    ]
    for options, message in cases:
        arguments = dict(seed=0, type_consistent=False) | options
        with pytest.raises(ValueError, match=whole(message)):
            corrupt(known=KG_TRAIN, **({"positives": positives} | arguments))
    with pytest.raises(ValueError, match=whole("positives hold relation ids beyond the 2 of the entity types")):
        corrupt(np.array([[0, 2, 2]]), 6, KG_TRAIN, seed=0, type_consistent=False,
                entity_types=SideTypes(KG_TRAIN, KG_TYPES, 2))
    with pytest.raises(ValueError, match=whole("positives must be an (n, 3) array of (head, relation, tail) ids")):
        corrupt(np.array([[0, 0]]), 6, KG_TRAIN, seed=0, type_consistent=False)
    with pytest.raises(ValueError, match=whole("known triples hold negative ids")):
        corrupt(positives, 6, np.array([[0, -1, 2]]), seed=0, type_consistent=False)
    with pytest.raises(ValueError, match=whole("known triples hold negative ids")):
        corrupt(positives, 6, {(0, -1, 2)}, seed=0, type_consistent=False)
    # the bounds themselves are allowed
    for probability in (0.0, 1.0):
        assert len(corrupt(positives, 6, KG_TRAIN, seed=0, type_consistent=False, head_probability=probability)) == 1


def test_head_probability_picks_the_side_tried_first() -> None:
    positives = np.array([[h, r, t] for h, r, t in [(0, 0, 1), (2, 1, 3), (4, 0, 5), (6, 1, 7)]])
    for probability, column in ((1.0, HEAD_COLUMN), (0.0, TAIL_COLUMN)):
        negatives = corrupt(positives, 50, set(), seed=3, per_positive=3, type_consistent=False,
                            head_probability=probability)
        assert negatives.replaced.tolist() == [column] * 12
        assert negatives.positive.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
        kept = 2 - column
        assert np.array_equal(negatives.triples[:, [1, kept]], np.repeat(positives[:, [1, kept]], 3, axis=0))
        assert np.all(negatives.triples[:, column] != np.repeat(positives[:, column], 3))
    # 0.9: about nine slots in ten try the head first (every side has replacements here)
    rng = np.random.default_rng(0)
    positives = np.unique(np.stack([rng.integers(0, 50, 200), rng.integers(0, 3, 200), rng.integers(0, 50, 200)],
                                   axis=1), axis=0)
    negatives = corrupt(positives, 50, positives, seed=1, per_positive=2, type_consistent=False, head_probability=0.9)
    heads = int(np.sum(negatives.replaced == HEAD_COLUMN))
    assert len(negatives) == 2 * len(positives) and 0.8 * len(negatives) < heads < len(negatives)


def test_replacements_are_drawn_from_every_entity() -> None:
    rng = np.random.default_rng(2)
    positives = np.unique(np.stack([rng.integers(0, 10, 120), rng.integers(0, 5, 120), rng.integers(0, 10, 120)],
                                   axis=1), axis=0)
    negatives = corrupt(positives, 10, positives, seed=4, per_positive=3, type_consistent=False)
    replacements = negatives.triples[np.arange(len(negatives)), negatives.replaced]
    counts = np.bincount(replacements, minlength=10)
    # ~300 uniform draws among 10 entities: each one comes up (a draw that never reaches entity 9 would not)
    assert len(counts) == 10 and counts.min() >= 5


def test_side_without_a_replacement_falls_back_and_slots_without_any_are_skipped() -> None:
    # typed, head first: the only other person is 1 -> (1, r0, 2); then no person is left for the head, the tail
    # gets the only other city, 3 -> (0, r0, 3); the third slot has neither
    negatives = corrupt(np.array([[0, 0, 2]]), 6, KG_TRAIN, seed=0, per_positive=3, type_consistent=True,
                        entity_types=KG_TYPES, train_triples=KG_TRAIN, head_probability=1.0)
    assert negatives.triples.tolist() == [[1, 0, 2], [0, 0, 3]] and negatives.replaced.tolist() == [0, 2]
    assert negatives.positive.tolist() == [0, 0] and negatives.consistent.tolist() == [True, True]
    # untyped with types known: every other head, consistent only where the head is a person
    negatives = corrupt(np.array([[0, 0, 2]]), 6, KG_TRAIN, seed=0, per_positive=5, type_consistent=False,
                        entity_types=KG_TYPES, train_triples=KG_TRAIN, head_probability=1.0)
    order = np.argsort(negatives.triples[:, 0])
    assert negatives.triples[order].tolist() == [[h, 0, 2] for h in (1, 2, 3, 4, 5)]
    assert negatives.consistent[order].tolist() == [True, False, False, False, False]
    assert negatives.source == "corrupted-random" and negatives.replaced.tolist() == [0] * 5
    # the same with a prebuilt SideTypes and no train
    again = corrupt(np.array([[0, 0, 2]]), 6, KG_TRAIN, seed=0, per_positive=5, type_consistent=False,
                    entity_types=SideTypes(KG_TRAIN, KG_TYPES, 2), head_probability=1.0)
    assert np.array_equal(again.triples, negatives.triples) and np.array_equal(again.consistent, negatives.consistent)


def test_a_lone_valid_replacement_is_found_after_the_random_draws() -> None:
    # 3000 entities; every tail of (0, r0, .) but 1234 is known and every head of (., r0, 1) is: one negative
    entities, lone = 3000, 1234
    known = {(0, 0, t) for t in range(entities) if t != lone} | {(h, 0, 1) for h in range(entities)}
    for seed in range(3):
        negatives = corrupt(np.array([[0, 0, 1]]), entities, known, seed=seed, per_positive=2, type_consistent=False)
        assert negatives.triples.tolist() == [[0, 0, lone]] and negatives.replaced.tolist() == [TAIL_COLUMN]
        assert negatives.positive.tolist() == [0]
    # the same with the known triples as an array and as a list
    array = np.array(sorted(known))
    for given in (array, sorted(known)):
        negatives = corrupt(np.array([[0, 0, 1]]), entities, given, seed=0, per_positive=1, type_consistent=False)
        assert negatives.triples.tolist() == [[0, 0, lone]]


def test_known_triples_outside_the_id_ranges_refuse_nothing() -> None:
    # 3 entities, relations 0..1: (0, r0, 4) and (0, r0, 5) would share the keys (h R + r) E + t of (0, r1, 1)
    # and (0, r1, 2); (0, r3, 0) that of (1, r1, 0)
    negatives = corrupt(np.array([[0, 1, 0]]), 3, np.array([[0, 0, 4], [0, 0, 5], [0, 3, 0]]), seed=0,
                        per_positive=2, type_consistent=False, head_probability=0.0)
    assert sorted(negatives.triples.tolist()) == [[0, 1, 1], [0, 1, 2]] and negatives.replaced.tolist() == [2, 2]
    negatives = corrupt(np.array([[0, 1, 0]]), 3, [(0, 3, 0)], seed=0, per_positive=2, type_consistent=False,
                        head_probability=1.0)
    assert sorted(negatives.triples.tolist()) == [[1, 1, 0], [2, 1, 0]] and negatives.replaced.tolist() == [0, 0]
    # the bounds of the ranges: with 3 entities and one relation (0, r0, 3) and (0, r1, 0) would share the key
    # of (1, r0, 0)
    for known in ([(0, 0, 3)], [(0, 1, 0)]):
        negatives = corrupt(np.array([[0, 0, 0]]), 3, known, seed=0, per_positive=2, type_consistent=False,
                            head_probability=1.0)
        assert sorted(negatives.triples.tolist()) == [[1, 0, 0], [2, 0, 0]]
    # more relations than entities: a known triple whose relation id is >= the number of entities still counts
    negatives = corrupt(np.array([[0, 2, 0]]), 2, [(0, 2, 1), (1, 2, 0), (0, 0, 0)], seed=0, per_positive=2,
                        type_consistent=False)
    assert negatives.triples.shape == (0, 3)
    # known and produced triples are refused: 3 entities, (0, r0, 1) known, positive (0, r0, 0), tails only left
    negatives = corrupt(np.array([[0, 0, 0]]), 3, [(0, 0, 1), (1, 0, 0), (2, 0, 0)], seed=5, per_positive=3,
                        type_consistent=False)
    assert negatives.triples.tolist() == [[0, 0, 2]]


def test_no_slot() -> None:
    for positives, per_positive in ((np.array([[0, 0, 2]]), 0), (np.zeros((0, 3)), 2)):
        negatives = corrupt(positives, 6, KG_TRAIN, seed=0, per_positive=per_positive, type_consistent=False)
        assert negatives.triples.shape == (0, 3) and negatives.replaced.shape == (0,)
        assert negatives.positive.shape == (0,) and negatives.consistent.shape == (0,)
        assert negatives.triples.dtype == np.int64 and negatives.replaced.dtype == np.int64
    typed = corrupt(np.zeros((0, 3)), 6, KG_TRAIN, seed=0, type_consistent=True, entity_types=KG_TYPES,
                    train_triples=KG_TRAIN)
    assert len(typed) == 0 and typed.source == "corrupted-typed"


def test_entity_types_from_lists() -> None:
    lists, names = entity_types_from_lists([["b", "a", "b"], [], ["c", 1], ("a",)])
    assert names == ["1", "a", "b", "c"]
    assert [types.tolist() for types in lists] == [[1, 2], [], [0, 3], [1]]
    assert all(types.dtype == np.int64 for types in lists)
    assert entity_types_from_lists([]) == ([], [])


def test_entity_types_json_edges(tmp_path: Path) -> None:
    path = tmp_path / "entity2types.json"
    for text in ('{"Q1": "human"}', '{"Q1": ["human", 3]}', '{"Q2": ["x"], "Q1": {"a": 1}}'):
        path.write_text(text)
        with pytest.raises(KGFormatError, match=whole(f"{path}: types of 'Q1' are not a list of strings")):
            read_entity_types_json(path, {"Q1": 0, "Q2": 1})
    path.write_text('{"Q9": "not checked", "Q2": ["b", "a"], "Q1": []}')
    lists, names = read_entity_types_json(path, {"Q1": 0, "Q2": 1, "Q3": 2})
    assert names == ["a", "b"] and [types.tolist() for types in lists] == [[], [0, 1], []]


def test_signature_types_edges(tmp_path: Path) -> None:
    path = tmp_path / "relation_types.tsv"
    path.write_text("/born\tperson\tcity\n/lives\tperson\tplace\n/absent\tx\ty\n")
    train = np.array([[0, 0, 1], [0, 0, 1], [2, 1, 1], [3, 2, 0]])  # relation 2 (/none) has no line
    lists, names = read_signature_types(path, {"/born": 0, "/lives": 1, "/none": 2}, train, 5)
    assert names == ["city", "person", "place"]
    assert [[names[t] for t in types] for types in lists] == [["person"], ["city", "place"], ["person"], [], []]
    with pytest.raises(ValueError, match=whole("train triples must be an (n, 3) array of (head, relation, tail) ids")):
        read_signature_types(path, {"/born": 0}, np.array([[0, 0]]), 2)
    path.write_text("/born\tperson\tcity\n/short\tperson\n")
    with pytest.raises(KGFormatError, match=whole(
            f"{path}:2: expected at least 3 tab-separated columns (relation domain range)")):
        read_signature_types(path, {"/born": 0}, train[:1], 5)


def test_negatives_file_edges(tmp_path: Path) -> None:
    path = tmp_path / "negatives.txt"
    entities, relations = {"Q1": 0, "Q2": 1, "Q3": 2}, {"P1": 0, "P2": 1}
    path.write_text("Q3\tP2\tQ1\n\nQ2 P1 Q2\n")
    triples = read_negatives_file(path, entities, relations)
    assert triples.tolist() == [[2, 1, 0], [1, 0, 1]] and triples.dtype == np.int64
    path.write_text("Q1\tP1\tQ2\nQ404\tP1\tQ2\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:2: unknown entity 'Q404' (not in the knowledge graph)")):
        read_negatives_file(path, entities, relations)
    path.write_text("Q1\tP9\tQ404\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}:1: unknown relation 'P9' (not in the knowledge graph)")):
        read_negatives_file(path, entities, relations)
    path.write_text("\n")
    with pytest.raises(KGFormatError, match=whole(f"{path}: the split is empty")):
        read_negatives_file(path, entities, relations)
