"""The type rule (Django-free): hand-made KGs whose right answers are known, and a brute force of the definition
(plain Python sets) on random small KGs for every kind of type data."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.lib.type_rule import (
    TypeOptions,
    type_rule,
    types_from_entity_data,
    types_from_relation_signatures,
    types_from_roles,
)

# --- declared relation signatures (FB15k-237-like), entity types implied by train ----------------------------
P0, P1, P2, A3, F0, F1, C0, C1, UNSEEN, Q = range(10)
NATIONALITY, DIRECTED_BY, ACTED_IN, AWARD_IN = range(4)
DOMAIN = ["person", "film", "actor", "award"]
RANGE = ["country", "person", "film", "country"]
SIGNATURE_TRAIN = np.array([
    [P0, NATIONALITY, C0], [P1, NATIONALITY, C1], [P2, NATIONALITY, C0],  # persons, countries
    [F0, DIRECTED_BY, P1], [F1, DIRECTED_BY, P2],  # films
    [P0, ACTED_IN, F0], [A3, ACTED_IN, F1],  # actors: p0 is also a person, a3 only an actor
    [Q, AWARD_IN, C1],  # the only entity of type award
])


def signature_model(**options):
    return types_from_relation_signatures(SIGNATURE_TRAIN, 10, DOMAIN, RANGE, TypeOptions(**options))


@pytest.mark.parametrize(("candidate", "rejected", "why"), [
    ((A3, NATIONALITY, C1), False, "a3 lacks person, but actors are persons in train (p0): the old rule rejected it"),
    ((F0, NATIONALITY, C0), True, "no film is a person in train"),
    ((P1, NATIONALITY, F0), True, "no film is a country"),
    ((UNSEEN, NATIONALITY, C0), False, "an entity without types is never ruled out"),
    ((Q, NATIONALITY, C0), False, "q's only type (award) has one entity: no evidence"),
    ((P0, ACTED_IN, C0), True, "no country is a film"),
    ((C0, AWARD_IN, C1), True, "no country is an award (a side with one entity still constrains)"),
    ((P2, ACTED_IN, F0), False, "persons overlap actors"),
])
def test_declared_signatures(candidate, rejected, why):
    assert type_rule(np.array([candidate]), signature_model()).tolist() == [rejected], why


def test_min_support_and_max_overlap():
    # min_support 1: q's single award type now counts, and award is disjoint from person
    assert type_rule(np.array([(Q, NATIONALITY, C0)]), signature_model(min_support=1)).tolist() == [True]
    # actor: 2 entities, 1 of them (p0) a person = a share of 0.5 on the nationality heads
    a3 = np.array([(A3, NATIONALITY, C1)])
    assert type_rule(a3, signature_model(max_overlap=0.4)).tolist() == [False]
    assert type_rule(a3, signature_model(max_overlap=0.6)).tolist() == [True]
    with pytest.raises(ValueError):
        TypeOptions(min_support=0)
    with pytest.raises(ValueError):
        TypeOptions(source="guess")


# --- entity types from the dataset (CoDEx-like), relation sides observed in train ---------------------------
H0, H1, H2, K0, K1, CITY0, CITY1, RARE, NONE, MIXED = range(10)
CITIZEN, LOCATED_IN = range(2)
ENTITY_TYPES = [["human"], ["human"], ["human"], ["country"], ["country"], ["city"], ["city"], ["moon"], [],
                ["human", "city"]]
ENTITY_TRAIN = np.array([[H0, CITIZEN, K0], [H1, CITIZEN, K1], [CITY0, LOCATED_IN, K0], [CITY1, LOCATED_IN, K1]])


@pytest.mark.parametrize(("candidate", "rejected"), [
    ((H2, CITIZEN, K0), False),  # a human, like the citizens in train
    ((CITY0, CITIZEN, K0), True),  # no citizen in train is a city
    ((H0, CITIZEN, CITY1), True),  # no citizenship in train is a city
    ((NONE, CITIZEN, K0), False),  # no types
    ((RARE, CITIZEN, K0), False),  # its only type has one entity
    ((MIXED, LOCATED_IN, K1), False),  # one of its types (city) fits
    ((H2, LOCATED_IN, K1), True),
])
def test_entity_types_from_the_dataset(candidate, rejected):
    model = types_from_entity_data(ENTITY_TRAIN, ENTITY_TYPES, 2)
    assert type_rule(np.array([candidate]), model).tolist() == [rejected]


def test_entity_types_with_a_declared_relation_type():
    # located_in declares its heads to be cities: a human that is also a city fits, a country does not
    model = types_from_entity_data(ENTITY_TRAIN, ENTITY_TYPES, 2, ["", "city"], ["", ""])
    candidates = np.array([(MIXED, LOCATED_IN, K0), (K0, LOCATED_IN, K1)])
    assert type_rule(candidates, model).tolist() == [False, True]


# --- role types (asked for on KGs without type data) ---------------------------------------------------------
A, B, C, X, Y, Z = range(6)
KNOWS, LOC = range(2)
ROLE_TRAIN = [(A, KNOWS, B), (B, KNOWS, C), (C, KNOWS, A), (X, LOC, Y), (Z, LOC, Y)]


def test_role_types():
    model = types_from_roles(np.array(ROLE_TRAIN), 6, 2)
    candidates = np.array([(X, KNOWS, A), (A, LOC, Y), (Z, LOC, A), (B, KNOWS, A)])
    # x and z only locate, y is only located, a b c only know each other: the groups are disjoint
    assert type_rule(candidates, model).tolist() == [True, True, True, False]
    # once a knower also locates, "locating" no longer rules anyone out of knowing
    denser = types_from_roles(np.array(ROLE_TRAIN + [(A, LOC, Y)]), 6, 2)
    assert type_rule(np.array([(X, KNOWS, B)]), denser).tolist() == [False]


def test_no_model_never_fires():
    assert type_rule(np.array([(0, 0, 1)]), None).tolist() == [False]


# --- brute force of the definition on random KGs -------------------------------------------------------------

def brute_force(candidates, types: list[set], reference: list[set], min_support: int, max_overlap: float) -> list[bool]:
    """The rule as stated: ruled out when, on the head or tail side, the side has entities, the entity is not
    one of them, has types with support, and each of those types is shared by at most max_overlap of its
    entities with the side's entities."""
    support: dict[str, int] = {}
    for names in types:
        for name in names:
            support[name] = support.get(name, 0) + 1
    out = []
    for h, r, t in candidates:
        fired = False
        for entity, side in ((h, 2 * r), (t, 2 * r + 1)):
            ref = reference[side]
            evidence = {name for name in types[entity] if support[name] >= min_support}
            if not ref or entity in ref or not evidence:
                continue
            if all(sum(1 for x in ref if name in types[x]) <= max_overlap * support[name] for name in evidence):
                fired = True
        out.append(fired)
    return out


kgs = st.integers(min_value=2, max_value=7).flatmap(lambda e: st.integers(min_value=1, max_value=3).flatmap(
    lambda r: st.tuples(
        st.just(e), st.just(r),
        st.lists(st.tuples(st.integers(0, e - 1), st.integers(0, r - 1), st.integers(0, e - 1)), min_size=1, max_size=14),
        st.lists(st.lists(st.sampled_from("abcd"), max_size=3), min_size=e, max_size=e),
        st.lists(st.sampled_from(["", "a", "b", "c"]), min_size=2 * r, max_size=2 * r),
        st.integers(1, 3), st.sampled_from([0.0, 0.3, 0.6]),
    )))


@settings(max_examples=150, deadline=None)
@given(kgs)
def test_brute_force_agrees(kg):
    num_entities, num_relations, train, entity_types, declared, min_support, max_overlap = kg
    options = TypeOptions(min_support, max_overlap)
    candidates = [(h, r, t) for h in range(num_entities) for r in range(num_relations) for t in range(num_entities)]
    cand = np.array(candidates)
    heads_of = [{h for h, rr, _t in train if rr == r} for r in range(num_relations)]
    tails_of = [{t for _h, rr, t in train if rr == r} for r in range(num_relations)]
    observed = [s for r in range(num_relations) for s in (heads_of[r], tails_of[r])]

    # declared signatures: an entity has the declared type of every side it is seen on
    implied = [set() for _ in range(num_entities)]
    for side in range(2 * num_relations):
        if declared[side]:
            for e in observed[side]:
                implied[e].add(declared[side])
    ref = [{e for e in range(num_entities) if declared[s] and declared[s] in implied[e]} for s in range(2 * num_relations)]
    model = types_from_relation_signatures(np.array(train), num_entities, declared[0::2], declared[1::2], options)
    assert type_rule(cand, model).tolist() == brute_force(candidates, implied, ref, min_support, max_overlap)

    # entity types from the dataset, sides observed in train
    given_types = [set(names) for names in entity_types]
    model = types_from_entity_data(np.array(train), entity_types, num_relations, options=options)
    assert type_rule(cand, model).tolist() == brute_force(candidates, given_types, observed, min_support, max_overlap)

    # role types
    roles = [{f"{'h' if s % 2 == 0 else 't'}{s // 2}" for s in range(2 * num_relations) if e in observed[s]}
             for e in range(num_entities)]
    model = types_from_roles(np.array(train), num_entities, num_relations, options)
    assert type_rule(cand, model).tolist() == brute_force(candidates, roles, observed, min_support, max_overlap)
