"""The type rule of the trivial filter (SPEC 4.1), Django-free: a candidate whose head (tail) cannot be of the
kind the relation takes is labelled N.

A trivial filter must almost never be wrong, so the rule is built to be cautious:

- types come from the dataset: entity types (CoDEx's Wikidata types), or relation domain/range types with the
  entity types they imply in train (FB15k-237's Freebase types). A KG without type data gets no type rule
  unless role types are asked for (``TypeOptions(source="roles")``: the relation sides each entity is seen on);
- "inconsistent" means *disjoint in train*: the candidate lacks the relation side's type (is not among the
  side's entities), has at least one type with support, and none of its supported types is shared by any
  entity on that side. Merely lacking the type is not enough: types inferred from train are incomplete (an
  actor seen only in film relations lacks /people/person, and /base/popstra/celebrity, ...).

On the published FB15k-237 pool (21,469 candidates, 2,738 published positives of which 1,715 in the pool) the
former rule ("lacks the type") rejected 7,169 candidates, 168 of them published positives; this one rejects
3,924 with 2 published positives (see tests/test_annotation_filter_published_quality.py).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

TYPE_SOURCES = ("dataset", "roles")


@dataclass(frozen=True)
class TypeOptions:
    """How cautious the type rule is. A trivial filter must almost never be wrong, so a type is evidence only
    with support, and "inconsistent" means *disjoint in train*: no train entity (or at most ``max_overlap`` of
    the type's entities) is both of the candidate's type and on the relation's side.

    - ``min_support``: a type counts as evidence only when at least this many train entities have it (a type
      seen on one entity, like FB15k-237's /common/annotation_category, says little about the entity).
    - ``max_overlap``: share of a type's entities that may be on the relation side while the type still counts
      as incompatible with it (0: strictly disjoint).
    - ``source``: ``dataset`` (default) uses the KG's own type data and no type rule without any; ``roles``
      uses the relation sides each entity is observed on in train as its types (``h:r``, ``t:r``), on any KG.
    """

    min_support: int = 2
    max_overlap: float = 0.0
    source: str = "dataset"

    def __post_init__(self) -> None:
        if self.min_support < 1:
            raise ValueError("the type rule's minimum support must be at least 1")
        if not 0.0 <= self.max_overlap < 1.0:
            raise ValueError("the type rule's maximum overlap must be in [0, 1)")
        if self.source not in TYPE_SOURCES:
            raise ValueError(f"unknown type source {self.source!r}; one of {', '.join(TYPE_SOURCES)}")


@dataclass(frozen=True)
class TypeModel:
    """What the type rule knows, as sparse matrices over entities (E), type names (T) and relation sides
    (2R: row ``2r`` = the heads of relation r, ``2r + 1`` = its tails).

    The candidate's head h is inconsistent with relation r when: side 2r is ``constrained``, h is not on it
    (not in ``reference``), h has at least one supported type, and none of h's supported types is
    ``compatible`` with side 2r. Likewise the tail with side 2r + 1. An entity without supported types (unseen
    in train, or only rare types) never fires the rule.
    """

    type_names: list[str]
    entity_types: sparse.csr_matrix  # (E, T) bool: the entity has the type
    supported: np.ndarray  # (T,) bool: the type has at least min_support entities
    reference: sparse.csr_matrix  # (2R, E) bool: the entities on each relation side
    compatible: sparse.csr_matrix  # (2R, T) bool: the type overlaps the side's entities (more than max_overlap)
    constrained: np.ndarray  # (2R,) bool: the side has entities at all (an undeclared, unseen side has none)
    source: str  # where the types came from, for reports
    # the same restricted to the supported types, ready for type_rule
    usable: sparse.csr_matrix  # (E, T') entity x supported type
    usable_compatible: sparse.csr_matrix  # (2R, T')


def type_rule(entries: np.ndarray, model: TypeModel | None) -> np.ndarray:
    """Mask: the head is inconsistent with the relation's heads, or the tail with its tails (see TypeModel).
    ``model`` None (a KG without type data) never fires."""
    entries = np.asarray(entries, dtype=np.int64).reshape(-1, 3)
    mask = np.zeros(len(entries), dtype=bool)
    if model is None or not len(entries):
        return mask
    usable, compatible = model.usable, model.usable_compatible
    has_usable = usable.getnnz(axis=1) > 0
    for column, offset in ((0, 0), (2, 1)):
        sides = entries[:, 1] * 2 + offset
        entities = entries[:, column]
        on_side = np.asarray(model.reference[sides, entities]).ravel().astype(bool)
        overlap = usable[entities].multiply(compatible[sides]).getnnz(axis=1)
        mask |= model.constrained[sides] & has_usable[entities] & ~on_side & (overlap == 0)
    return mask


def _bool_matrix(rows: Sequence[int], columns: Sequence[int], shape: tuple[int, int]) -> sparse.csr_matrix:
    data = np.ones(len(rows), dtype=bool)
    matrix = sparse.csr_matrix((data, (np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64))), shape=shape)
    matrix.sum_duplicates()
    matrix.data[:] = True
    return matrix


def _observed_sides(train: np.ndarray, num_entities: int, num_relations: int) -> sparse.csr_matrix:
    """(2R, E): the train entities on each relation side (heads of r in row 2r, tails in row 2r + 1)."""
    rows = np.concatenate([train[:, 1] * 2, train[:, 1] * 2 + 1])
    columns = np.concatenate([train[:, 0], train[:, 2]])
    return _bool_matrix(rows, columns, (2 * num_relations, num_entities))


def build_type_model(
    entity_types: sparse.csr_matrix, type_names: list[str], reference: sparse.csr_matrix, options: TypeOptions, source: str
) -> TypeModel:
    """Compatibility of every type with every relation side, from how many of the type's entities are on it."""
    entity_types = entity_types.astype(bool).tocsr()
    reference = reference.astype(bool).tocsr()
    support = np.asarray(entity_types.sum(axis=0)).ravel()
    # (2R, T) sparse: how many of the type's entities are on the side; kept sparse (many types, many relations)
    on_side = (reference.astype(np.int64) @ entity_types.astype(np.int64)).tocsr()
    on_side.eliminate_zeros()
    keep = on_side.data > options.max_overlap * support[on_side.indices]
    compatible = sparse.csr_matrix((keep, on_side.indices, on_side.indptr), shape=on_side.shape)
    compatible.eliminate_zeros()
    constrained = reference.getnnz(axis=1) > 0
    supported = support >= options.min_support
    return TypeModel(list(type_names), entity_types, supported, reference, compatible, constrained, source,
                     entity_types[:, supported].tocsr(), compatible[:, supported].tocsr())


def _declared_reference(
    entity_types: sparse.csr_matrix, type_index: dict[str, int], declared: Sequence[str], num_entities: int
) -> sparse.csr_matrix:
    """(2R, E): the entities with each relation side's declared type; an undeclared side has none (unconstrained)."""
    by_type = entity_types.T.tocsr()
    rows: list[np.ndarray] = []
    columns: list[np.ndarray] = []
    for side, name in enumerate(declared):
        if name and name in type_index:
            members = by_type[type_index[name]].indices
            rows.append(np.full(len(members), side, dtype=np.int64))
            columns.append(members.astype(np.int64))
    if not rows:
        return sparse.csr_matrix((len(declared), num_entities), dtype=bool)
    return _bool_matrix(np.concatenate(rows), np.concatenate(columns), (len(declared), num_entities))


def _interleave(domain: Sequence[str], range_: Sequence[str]) -> list[str]:
    return [name.strip() for pair in zip(domain, range_) for name in pair]


def _signature_types(train: np.ndarray, declared: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(entities, type names) pairs implied by the signatures: the heads of r have r's domain type, its tails
    its range type."""
    sides = np.concatenate([train[:, 1] * 2, train[:, 1] * 2 + 1])
    entities = np.concatenate([train[:, 0], train[:, 2]])
    width = int(entities.max()) + 1 if len(entities) else 1
    keys = np.unique(sides * width + entities)
    sides, entities = keys // width, keys % width
    names = np.asarray(declared, dtype=object)[sides] if len(keys) else np.zeros(0, dtype=object)
    keep = names != ""
    return entities[keep], names[keep]


def _as_train(train: np.ndarray) -> np.ndarray:
    return np.asarray(train, dtype=np.int64).reshape(-1, 3)


def _types_matrix(
    entities: np.ndarray, names: np.ndarray, num_entities: int
) -> tuple[sparse.csr_matrix, list[str], dict[str, int]]:
    """(E, T) bool matrix of the (entity, type name) pairs, with the sorted type names and their columns."""
    names = names.tolist()
    type_names = sorted(set(names))
    index = {name: i for i, name in enumerate(type_names)}
    matrix = _bool_matrix(entities, [index[name] for name in names], (num_entities, len(type_names)))
    return matrix, type_names, index


def types_from_relation_signatures(
    train: np.ndarray, num_entities: int, domain: Sequence[str], range_: Sequence[str], options: TypeOptions = TypeOptions()
) -> TypeModel:
    """Declared relation domain/range types (FB15k-237's Freebase types); an entity's types are inferred from
    train: the head of a relation with domain X (tail of one with range X) has type X. Those inferred types are
    incomplete (an actor seen only in film relations lacks /people/person), so the rule does not fire on
    "lacks the type" alone: the entity's types must all be disjoint from the declared type in train."""
    train = _as_train(train)
    declared = _interleave(domain, range_)
    matrix, names, index = _types_matrix(*_signature_types(train, declared), num_entities)
    reference = _declared_reference(matrix, index, declared, num_entities)
    return build_type_model(matrix, names, reference, options,
                            "relation domain/range types; entity types inferred from train")


def types_from_entity_data(
    train: np.ndarray,
    entity_types: Sequence[Iterable[str]],
    num_relations: int,
    domain: Sequence[str] | None = None,
    range_: Sequence[str] | None = None,
    options: TypeOptions = TypeOptions(),
) -> TypeModel:
    """Entity types from the dataset (e.g. CoDEx Wikidata types). A relation side with a declared type accepts
    that type's entities; otherwise the entities observed on it in train. A type is compatible with a side when
    (more than ``max_overlap`` of) its entities are on it."""
    train = _as_train(train)
    num_entities = len(entity_types)
    pairs = [(e, str(name)) for e, names in enumerate(entity_types) for name in names]
    declared = _interleave(domain, range_) if domain is not None and range_ is not None else [""] * (2 * num_relations)
    signature_entities, signature_names = _signature_types(train, declared)
    entities = np.concatenate([np.array([e for e, _n in pairs], dtype=np.int64), signature_entities])
    names = np.concatenate([np.array([n for _e, n in pairs], dtype=object), signature_names])
    matrix, names, index = _types_matrix(entities, names, num_entities)
    observed = _observed_sides(train, num_entities, num_relations)
    declared_ref = _declared_reference(matrix, index, declared, num_entities)
    has_declared = np.array([bool(name) and name in index for name in declared], dtype=bool)
    reference = sparse.vstack([
        declared_ref[side] if has_declared[side] else observed[side] for side in range(2 * num_relations)
    ]).tocsr() if num_relations else observed
    return build_type_model(matrix, names, reference, options, "entity types from the dataset")


def types_from_roles(train: np.ndarray, num_entities: int, num_relations: int, options: TypeOptions = TypeOptions()) -> TypeModel:
    """No type data (asked for explicitly): an entity's "types" are the relation sides it is observed on in
    train (``h:r``, ``t:r``); the heads of r are the entities of type ``h:r``. A candidate is ruled out only
    when none of its roles is ever shared with an entity on the relation's side."""
    train = _as_train(train)
    observed = _observed_sides(train, num_entities, num_relations)
    names = [f"{'h' if side % 2 == 0 else 't'}:{side // 2}" for side in range(2 * num_relations)]
    return build_type_model(observed.T.tocsr(), names, observed, options,
                            "no type data: role types (relations each entity is observed with in train)")
