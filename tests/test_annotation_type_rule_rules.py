"""annotation/lib/type_rule.py (issue 19): the options' bounds and whole messages, the model's parts on a hand-made
KG (which types are supported, which sides constrained, which types compatible), the report text of each kind of
type data, and edge cases (no triple, no relation, an empty candidate list). Django-free."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from scipy import sparse

from annotation.lib.type_rule import (TYPE_SOURCES, TypeOptions, build_type_model, type_rule,
                                      types_from_entity_data, types_from_relation_signatures, types_from_roles)
from tests._raises_support import whole


def test_options_defaults_and_bounds():
    assert TYPE_SOURCES == ("dataset", "roles")
    options = TypeOptions()
    assert (options.min_support, options.max_overlap, options.source) == (2, 0.0, "dataset")
    with pytest.raises(FrozenInstanceError):
        options.min_support = 5
    # the bounds themselves: min_support 1, max_overlap 0 and just under 1 are allowed
    for good in (TypeOptions(min_support=1), TypeOptions(max_overlap=0.0), TypeOptions(max_overlap=0.999),
                 TypeOptions(source="roles"), TypeOptions(source="dataset")):
        assert good.min_support >= 1
    with pytest.raises(ValueError, match=whole("the type rule's minimum support must be at least 1")):
        TypeOptions(min_support=0)
    for bad in (1.0, -0.001, 1.5):
        with pytest.raises(ValueError, match=whole("the type rule's maximum overlap must be in [0, 1)")):
            TypeOptions(max_overlap=bad)
    with pytest.raises(ValueError, match=whole("unknown type source 'guess'; one of dataset, roles")):
        TypeOptions(source="guess")


# entities 0..5; types: 0 "a" (entities 0, 1, 2), 1 "b" (entities 2, 3), 2 "c" (entity 4 only); entity 5 none.
# two relations: side 0 (heads of r0) = {0, 1}, side 1 (tails of r0) = {3}, side 2 = {} (unconstrained),
# side 3 (tails of r1) = {2, 4}
ENTITY_TYPES = sparse.csr_matrix(np.array([[1, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]))
REFERENCE = sparse.csr_matrix(np.array([[1, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0] * 6, [0, 0, 1, 0, 1, 0]]))


def test_model_parts_by_hand():
    model = build_type_model(ENTITY_TYPES, ["a", "b", "c"], REFERENCE, TypeOptions(), "by hand")
    assert model.type_names == ["a", "b", "c"] and model.source == "by hand"
    assert model.supported.tolist() == [True, True, False]  # c has one entity < min_support 2
    assert model.constrained.tolist() == [True, True, False, True]
    # side 0 {0, 1}: a (2 of 3 on it); side 1 {3}: b; side 3 {2, 4}: a (entity 2), b (entity 2), c (entity 4)
    assert model.compatible.toarray().astype(int).tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 1]]
    assert model.usable.toarray().astype(int).tolist() == [[1, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 0]]
    assert model.usable_compatible.toarray().astype(int).tolist() == [[1, 0], [0, 1], [0, 0], [1, 1]]
    assert model.reference.toarray().astype(int).tolist() == REFERENCE.toarray().tolist()
    assert model.entity_types.dtype == bool and model.reference.dtype == bool
    # max_overlap 0.5: a type is compatible when more than half of its entities are on the side. a: 2 of 3 on
    # side 0 (yes), 1 of 3 on side 3 (no); b: 1 of 2 on sides 1 and 3 (exactly half: no); c: 1 of 1 on side 3
    half = build_type_model(ENTITY_TYPES, ["a", "b", "c"], REFERENCE, TypeOptions(max_overlap=0.5), "x")
    assert half.compatible.toarray().astype(int).tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1]]


def test_rule_by_hand_on_each_side():
    model = build_type_model(ENTITY_TYPES, ["a", "b", "c"], REFERENCE, TypeOptions(), "by hand")
    # (head, relation, tail): relation 0 heads need a, tails need b; relation 1 heads free, tails a or b
    entries = np.array([
        (3, 0, 3),  # head 3 is b only, side 0 takes a: fires on the head
        (0, 0, 0),  # tail 0 is a only, side 1 takes b: fires on the tail
        (2, 0, 2),  # 2 is a and b: fits both
        (4, 0, 3),  # head 4 has only c, unsupported: no evidence
        (5, 0, 3),  # head 5 has no type
        (3, 1, 0),  # side 2 is unconstrained; 0 (a) fits side 3
        (1, 0, 3),  # fits
    ])
    assert type_rule(entries, model).tolist() == [True, True, False, False, False, False, False]
    # flat input is read as triples; an empty list gives an empty mask
    assert type_rule(entries.ravel().tolist(), model).tolist() == [True, True, False, False, False, False, False]
    empty = type_rule(np.zeros((0, 3), dtype=np.int64), model)
    assert empty.tolist() == [] and empty.dtype == bool
    assert type_rule(np.array([(3, 0, 3)]), None).dtype == bool


def test_an_entity_on_the_side_never_fires_even_with_disjoint_types():
    # side 1 = {3} takes b; put entity 0 (type a only) on side 1 as well: it is a reference entity there
    reference = REFERENCE.tolil(copy=True)
    reference[1, 0] = 1
    model = build_type_model(ENTITY_TYPES, ["a", "b", "c"], reference.tocsr(), TypeOptions(max_overlap=0.9), "x")
    assert type_rule(np.array([(0, 0, 0), (1, 0, 1)]), model).tolist() == [False, True]


def test_report_text_of_each_kind_of_type_data():
    train = np.array([[0, 0, 1], [2, 0, 3]])
    assert types_from_relation_signatures(train, 4, ["p"], ["q"]).source == \
        "relation domain/range types; entity types inferred from train"
    assert types_from_entity_data(train, [["x"], [], ["x"], []], 1).source == "entity types from the dataset"
    assert types_from_roles(train, 4, 1).source == \
        "no type data: role types (relations each entity is observed with in train)"


def test_role_type_names_and_sides():
    train = np.array([[0, 1, 2], [3, 0, 4]])
    model = types_from_roles(train, 5, 2, TypeOptions(min_support=1))
    assert model.type_names == ["h:0", "t:0", "h:1", "t:1"]
    # entity types are the sides each entity is seen on
    assert model.entity_types.toarray().astype(int).tolist() == [[0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1],
                                                                   [1, 0, 0, 0], [0, 1, 0, 0]]
    assert model.constrained.tolist() == [True, True, True, True]


def test_signature_types_are_stripped_and_undeclared_sides_free():
    # relation 0: domain " person " (stripped), range "" (undeclared: no constraint on tails)
    train = np.array([[0, 0, 1], [2, 0, 3], [1, 1, 0]])
    model = types_from_relation_signatures(train, 5, [" person ", "thing"], ["", "person"], TypeOptions(min_support=1))
    assert model.type_names == ["person", "thing"]
    assert model.constrained.tolist() == [True, False, True, True]
    # entity 0 and 2 are persons (heads of r0); 1 is a thing (head of r1); 0 is also the person tail of r1
    assert model.entity_types.toarray().astype(int).tolist() == [[1, 0], [0, 1], [1, 0], [0, 0], [0, 0]]
    # a thing as the head of r0 fires; anything as the tail of r0 does not (no constraint)
    assert type_rule(np.array([(1, 0, 1), (0, 0, 1), (1, 1, 2)]), model).tolist() == [True, False, False]


def test_entity_data_with_declared_sides_and_no_relation():
    # declared head type "city" on relation 0: its heads are every city (1 too, never seen in train); undeclared
    # tails: the observed tails of train
    types = [["city"], ["city"], ["human"], ["country"], ["human"]]
    train = np.array([[0, 0, 3]])
    model = types_from_entity_data(train, types, 1, ["city"], [""], TypeOptions(min_support=1))
    assert model.reference.toarray().astype(int).tolist() == [[1, 1, 0, 0, 0], [0, 0, 0, 1, 0]]
    assert type_rule(np.array([(4, 0, 3), (1, 0, 3), (1, 0, 4)]), model).tolist() == [True, False, True]
    # nothing declared: the observed sides
    model = types_from_entity_data(train, types, 1, [""], [""], TypeOptions(min_support=1))
    assert model.reference.toarray().astype(int).tolist() == [[1, 0, 0, 0, 0], [0, 0, 0, 1, 0]]
    # no relation, no triple: no side, nothing fires
    model = types_from_entity_data(np.zeros((0, 3)), types, 0, options=TypeOptions(min_support=1))
    assert model.reference.shape == (0, 5) and model.constrained.tolist() == []
    model = types_from_relation_signatures(np.zeros((0, 3)), 3, ["a"], ["b"])
    assert model.type_names == [] and model.constrained.tolist() == [False, False]
    assert type_rule(np.array([(0, 0, 1)]), model).tolist() == [False]
