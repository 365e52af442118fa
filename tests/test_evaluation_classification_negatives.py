"""Negatives for triple classification: seeded corruption (reproducible, never a known triple, type-consistent when
asked), type consistency on a tiny typed KG, the type-file readers and a dataset's negatives file (CoDEx-S)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.core.negatives import (
    corrupt,
    labelled_negatives,
    read_entity_types_json,
    read_negatives_file,
    read_signature_types,
    type_consistency,
)
from pooling.engine.kgfiles import KGFormatError, read_kg

# entities: 0, 1 persons; 2, 3 cities; 4 a film; 5 untyped. relations: 0 born_in (person -> city),
# 1 directed (person -> film), 2 never in train
PERSON, CITY, FILM = 0, 1, 2
TYPES = [np.array([PERSON]), np.array([PERSON]), np.array([CITY]), np.array([CITY]), np.array([FILM]),
         np.zeros(0, dtype=np.int64)]
TRAIN = np.array([[0, 0, 2], [1, 0, 3], [0, 1, 4]])


def test_type_consistency_on_a_tiny_typed_kg() -> None:
    triples = np.array([[1, 0, 2], [4, 0, 2], [0, 0, 4], [5, 0, 2], [1, 1, 4], [0, 2, 1]])
    assert list(type_consistency(triples, TRAIN, TYPES)) == [True, False, False, False, True, False]
    # the replaced side only: (4, born_in, 2) with its tail replaced is consistent, with its head not
    replaced = np.array([0, 2, 0, 0, 2, 0])
    assert list(type_consistency(triples, TRAIN, TYPES, replaced=replaced)) == [True, True, True, False, True, False]


def test_labelled_negatives_carry_their_source() -> None:
    negatives = labelled_negatives(np.array([[1, 0, 2], [4, 0, 2]]), "judged", TRAIN, TYPES)
    assert negatives.source == "judged" and list(negatives.consistent) == [True, False]
    unknown = labelled_negatives(np.array([[1, 0, 2]]), "dataset")
    assert unknown.source == "dataset" and list(unknown.consistent) == [False]
    with pytest.raises(ValueError, match="judged"):
        labelled_negatives(np.array([[1, 0, 2]]), "corrupted-typed")


def test_typed_corruption_of_the_tiny_kg_is_exactly_the_consistent_unknown_triples() -> None:
    # (0, born_in, 2): a person other than 0 as head -> (1, 0, 2); a city other than 2 as tail -> (0, 0, 3)
    negatives = corrupt(np.array([[0, 0, 2]]), 6, TRAIN, seed=0, per_positive=3, type_consistent=True,
                        entity_types=TYPES, train_triples=TRAIN)
    assert sorted(map(tuple, negatives.triples.tolist())) == [(0, 0, 3), (1, 0, 2)]  # the third slot has none
    assert negatives.source == "corrupted-typed" and negatives.consistent.all()
    assert list(negatives.positive) == [0, 0]
    assert sorted(negatives.replaced.tolist()) == [0, 2]


def random_kg(seed: int, entities: int = 40, relations: int = 5, triples: int = 300):
    rng = np.random.default_rng(seed)
    kg = np.unique(np.stack([rng.integers(0, entities, triples), rng.integers(0, relations, triples),
                             rng.integers(0, entities, triples)], axis=1), axis=0)
    types = [rng.choice(6, size=int(rng.integers(0, 3)), replace=False) for _ in range(entities)]
    return kg, types


def side_types_by_hand(train: np.ndarray, types: list[np.ndarray]) -> dict[tuple[int, int], set[int]]:
    sides: dict[tuple[int, int], set[int]] = {}
    for head, relation, tail in train.tolist():
        sides.setdefault((relation, 0), set()).update(types[head].tolist())
        sides.setdefault((relation, 2), set()).update(types[tail].tolist())
    return sides


@pytest.mark.parametrize("typed", [True, False])
def test_corruption_is_seeded_new_and_consistent_as_claimed(typed: bool) -> None:
    kg, types = random_kg(1)
    train, test = kg[:250], kg[250:]
    known = set(map(tuple, kg.tolist()))
    run = [corrupt(test, 40, kg, seed=5, per_positive=3, type_consistent=typed, entity_types=types,
                   train_triples=train) for _ in range(2)]
    assert np.array_equal(run[0].triples, run[1].triples) and np.array_equal(run[0].consistent, run[1].consistent)
    other = corrupt(test, 40, known, seed=6, per_positive=3, type_consistent=typed, entity_types=types,
                    train_triples=train)
    assert not np.array_equal(other.triples, run[0].triples)
    negatives = run[0]
    assert len(negatives) > 0.9 * 3 * len(test)
    produced = list(map(tuple, negatives.triples.tolist()))
    assert not set(produced) & known and len(set(produced)) == len(produced)
    sides = side_types_by_hand(train, types)
    for triple, column, source, consistent in zip(negatives.triples.tolist(), negatives.replaced,
                                                   negatives.positive, negatives.consistent):
        positive = test[source].tolist()
        kept = 2 - column
        assert triple[1] == positive[1] and triple[kept] == positive[kept] and triple[column] != positive[column]
        expected = bool(sides.get((triple[1], column), set()) & set(types[triple[column]].tolist()))
        assert consistent == expected
    assert negatives.consistent.all() if typed else not negatives.consistent.all()


def test_corruption_arguments() -> None:
    with pytest.raises(ValueError, match="needs entity types"):
        corrupt(TRAIN, 6, TRAIN, seed=0, type_consistent=True)
    with pytest.raises(ValueError, match="train triples"):
        corrupt(TRAIN, 6, TRAIN, seed=0, type_consistent=True, entity_types=TYPES)
    with pytest.raises(ValueError, match="beyond"):
        corrupt(TRAIN, 4, TRAIN, seed=0, type_consistent=False)
    untyped = corrupt(TRAIN, 6, TRAIN, seed=0, type_consistent=False)
    assert untyped.source == "corrupted-random" and not untyped.consistent.any() and len(untyped) == 3


def test_type_file_readers(tmp_path: Path) -> None:
    types_json = tmp_path / "entity2types.json"
    types_json.write_text('{"Q1": ["human"], "Q2": ["city", "capital"], "Q9": ["ignored"]}')
    lists, names = read_entity_types_json(types_json, {"Q1": 0, "Q2": 1, "Q3": 2})
    assert names == ["capital", "city", "human"]
    assert [[names[t] for t in types] for types in lists] == [["human"], ["capital", "city"], []]
    signatures = tmp_path / "relation_types.tsv"
    signatures.write_text("/born\t/people/person\t/location/city\n/other\t/x\t/y\n")
    lists, names = read_signature_types(signatures, {"/born": 0, "/unknown": 1}, np.array([[0, 0, 1], [2, 1, 1]]), 3)
    assert [[names[t] for t in types] for types in lists] == [["/people/person"], ["/location/city"], []]


def test_dataset_negatives_of_codex_s(shared_data: Path) -> None:
    kg = read_kg(shared_data / "codex-s")
    entity_index = {key: i for i, key in enumerate(kg.entity_keys)}
    relation_index = {key: i for i, key in enumerate(kg.relation_keys)}
    path = shared_data / "codex-s" / "test_negatives.txt"
    triples = read_negatives_file(path, entity_index, relation_index)
    lines = path.read_text().splitlines()
    assert len(triples) == len(lines) == 1828
    first = lines[0].split("\t")
    assert [kg.entity_keys[triples[0, 0]], kg.relation_keys[triples[0, 1]], kg.entity_keys[triples[0, 2]]] == first
    known = set(map(tuple, np.concatenate(list(kg.splits.values())).tolist()))
    assert not set(map(tuple, triples.tolist())) & known  # verified false: none is a positive of the dataset


def test_dataset_negatives_with_unknown_names_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "test_negatives.txt"
    path.write_text("Q1\tP1\tQ2\nQ1\tP1\tQ404\n")
    with pytest.raises(KGFormatError, match=rf"^{path}:2: unknown entity 'Q404'"):
        read_negatives_file(path, {"Q1": 0, "Q2": 1}, {"P1": 0})
    path.write_text("Q1\tP1\tQ2\n\nQ2\tP9\tQ1\n")
    with pytest.raises(KGFormatError, match=rf"^{path}:3: unknown relation 'P9'"):
        read_negatives_file(path, {"Q1": 0, "Q2": 1}, {"P1": 0})
    path.write_text("Q1\tP1\n")
    with pytest.raises(KGFormatError, match=rf"^{path}:1: expected 3 columns"):
        read_negatives_file(path, {"Q1": 0, "Q2": 1}, {"P1": 0})
