"""Negative triples for triple classification (issue #16), Django-free, numpy only.

Three sources, named in reports by :attr:`Negatives.source`:

- ``judged``: triples a campaign judged false, ``dataset``: a dataset's own hard negatives (CoDEx
  ``valid_negatives.txt`` / ``test_negatives.txt``, read by :func:`read_negatives_file`); both wrapped by
  :func:`labelled_negatives`;
- ``corrupted-typed`` / ``corrupted-random``: :func:`corrupt` replaces the head or the tail of each positive.

Type consistency (the study's Table 8 split). The *types of a relation side* are the types of every entity seen
on that side in train (the heads of r, or its tails). An entity is *consistent* with a side when it has at least
one of those types; an entity without types, or a side without typed entities (e.g. a relation absent from
train), is never consistent. A corrupted triple is consistent when its replaced entity is consistent with the
replaced side; a judged or dataset negative, where the replaced side is unknown, when both its head and its tail
are (:func:`type_consistency`).

Entity types are ``list[np.ndarray]``: ``entity_types[e]`` holds the int type ids of entity e (any numbering).
:func:`entity_types_from_lists` numbers type names; :func:`read_entity_types_json` reads CoDEx's
``entity2types.json`` and :func:`read_signature_types` FB15k-237's ``relation_types.tsv`` (an entity gets the
domain type of every relation it heads in train and the range type of every relation it is the tail of, as
``annotation.lib.type_rule`` infers them).

Corruption is seeded: the same inputs and seed give the same negatives. It never returns a known true triple, a
positive, or the same negative twice.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pooling.engine.kgfiles import KGFormatError, read_json_object, read_keyed_table, read_triple_file
from pooling.engine.userfiles import shown

__all__ = [
    "SOURCES", "HEAD_COLUMN", "TAIL_COLUMN", "Negatives", "corrupt", "type_consistency", "labelled_negatives",
    "SideTypes", "entity_types_from_lists", "read_entity_types_json", "read_signature_types",
    "read_negatives_file",
]

SOURCES = ("judged", "dataset", "corrupted-typed", "corrupted-random")
HEAD_COLUMN, TAIL_COLUMN = 0, 2
#: random draws tried per corrupted slot before listing every valid replacement of that side
_DRAWS_BEFORE_LISTING = 64


@dataclass(frozen=True)
class Negatives:
    triples: np.ndarray  # [m, 3] int64
    consistent: np.ndarray  # bool [m]: the replaced entity has a type of the relation's side (Table 8 split)
    source: str  # "judged" | "dataset" | "corrupted-typed" | "corrupted-random"
    #: corruptions only: the column replaced in each negative (0 = head, 2 = tail), and the index of the
    #: positive it was made from
    replaced: np.ndarray | None = None
    positive: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.triples)


def _as_triples(triples: np.ndarray | Sequence, name: str = "triples") -> np.ndarray:
    array = np.asarray(triples, dtype=np.int64)
    if array.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must be an (n, 3) array of (head, relation, tail) ids")
    if array.min() < 0:
        raise ValueError(f"{name} hold negative ids")
    return array


class SideTypes:
    """Which entities are consistent with which relation side (module docstring), from train and entity types.

    Side ``2 r`` is the heads of relation r, ``2 r + 1`` its tails.
    """

    def __init__(self, train_triples: np.ndarray, entity_types: Sequence[np.ndarray], num_relations: int) -> None:
        train = _as_triples(train_triples, "train triples")
        self.num_entities = len(entity_types)
        self.num_relations = int(num_relations)
        if len(train) and (train[:, [0, 2]].max() >= self.num_entities or train[:, 1].max() >= num_relations):
            raise ValueError("train triples hold ids beyond the entity types / relations given")
        lengths = np.array([len(types) for types in entity_types], dtype=np.int64)
        self._offsets = np.r_[0, np.cumsum(lengths)]
        flat = (np.concatenate([np.asarray(t, dtype=np.int64).reshape(-1) for t in entity_types])
                if lengths.sum() else np.zeros(0, dtype=np.int64))
        if len(flat) and flat.min() < 0:
            raise ValueError("type ids must be >= 0")
        self._flat_types = flat
        self._flat_entity = np.repeat(np.arange(self.num_entities), lengths)
        self.num_types = int(flat.max()) + 1 if len(flat) else 0
        # distinct (side, entity) pairs of train, then every type of those entities: (2R, T) bool
        sides = np.concatenate([train[:, 1] * 2, train[:, 1] * 2 + 1])
        entities = np.concatenate([train[:, 0], train[:, 2]])
        pairs = np.unique(sides * max(self.num_entities, 1) + entities)
        pair_side, pair_entity = pairs // max(self.num_entities, 1), pairs % max(self.num_entities, 1)
        counts = lengths[pair_entity]
        starts = np.repeat(self._offsets[pair_entity], counts)
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        self.side_types = np.zeros((2 * self.num_relations, self.num_types), dtype=bool)
        self.side_types[np.repeat(pair_side, counts), flat[starts + within]] = True
        self._candidates: dict[int, np.ndarray] = {}

    def consistent(self, entities: np.ndarray, sides: np.ndarray) -> np.ndarray:
        """bool [n]: entity i has a type of side i."""
        entities = np.asarray(entities, dtype=np.int64).reshape(-1)
        sides = np.asarray(sides, dtype=np.int64).reshape(-1)
        if len(entities) and (entities.max() >= self.num_entities or sides.max() >= 2 * self.num_relations):
            raise ValueError("entity or relation ids beyond the entity types / relations given")
        counts = self._offsets[entities + 1] - self._offsets[entities]
        starts = np.repeat(self._offsets[entities], counts)
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        hits = self.side_types[np.repeat(sides, counts), self._flat_types[starts + within]]
        owner = np.repeat(np.arange(len(entities)), counts)
        return np.bincount(owner, weights=hits, minlength=len(entities)) > 0

    def candidates(self, side: int) -> np.ndarray:
        """Sorted ids of every entity consistent with ``side`` (cached)."""
        if side not in self._candidates:
            hits = self.side_types[side, self._flat_types]
            mask = np.bincount(self._flat_entity, weights=hits, minlength=self.num_entities) > 0
            self._candidates[side] = np.flatnonzero(mask)
        return self._candidates[side]


def type_consistency(triples: np.ndarray, train_triples: np.ndarray, entity_types: Sequence[np.ndarray] | SideTypes,
                     *, replaced: np.ndarray | None = None, num_relations: int | None = None) -> np.ndarray:
    """bool [n]: with ``replaced`` (the corrupted column per triple, 0 or 2) that entity is consistent with its
    side; without it (judged / dataset negatives) both the head and the tail are. ``entity_types`` may be a
    prebuilt :class:`SideTypes` (then ``train_triples`` is ignored)."""
    triples = _as_triples(triples)
    side_types = _side_types(entity_types, train_triples, triples, num_relations=num_relations)
    head_ok = side_types.consistent(triples[:, 0], triples[:, 1] * 2)
    tail_ok = side_types.consistent(triples[:, 2], triples[:, 1] * 2 + 1)
    if replaced is None:
        return head_ok & tail_ok
    replaced = np.asarray(replaced, dtype=np.int64).reshape(-1)
    if len(replaced) != len(triples) or not np.all((replaced == HEAD_COLUMN) | (replaced == TAIL_COLUMN)):
        raise ValueError("replaced must give 0 (head) or 2 (tail) for every triple")
    return np.where(replaced == HEAD_COLUMN, head_ok, tail_ok)


def _side_types(entity_types: Sequence[np.ndarray] | SideTypes, train_triples: np.ndarray, *others: np.ndarray,
                num_relations: int | None = None) -> SideTypes:
    if isinstance(entity_types, SideTypes):
        return entity_types
    if num_relations is None:
        relations = [np.asarray(t, dtype=np.int64).reshape(-1, 3)[:, 1] for t in (train_triples, *others)
                     if t is not None]
        num_relations = int(max((r.max() for r in relations if len(r)), default=-1)) + 1
    return SideTypes(train_triples, entity_types, num_relations)


def labelled_negatives(triples: np.ndarray, source: str, train_triples: np.ndarray | None = None,
                       entity_types: Sequence[np.ndarray] | SideTypes | None = None) -> Negatives:
    """Judged or dataset negatives with their consistency (all False without entity types: unknown)."""
    if source not in ("judged", "dataset"):
        raise ValueError(f"labelled negatives come from 'judged' or 'dataset', not {source!r}")
    triples = _as_triples(triples)
    if entity_types is None:
        consistent = np.zeros(len(triples), dtype=bool)
    else:
        consistent = type_consistency(triples, train_triples if train_triples is not None else np.zeros((0, 3)),
                                      entity_types)
    return Negatives(triples, consistent, source)


def _known_keys(known: set | np.ndarray | Iterable, width_entities: int, width_relations: int) -> set[int]:
    """Known true triples as ints ``(h * R + r) * E + t``."""
    if isinstance(known, np.ndarray):
        array = _as_triples(known, "known triples")
    else:
        array = _as_triples(np.array(list(known), dtype=np.int64).reshape(-1, 3), "known triples")
    inside = (array[:, 0] < width_entities) & (array[:, 2] < width_entities) & (array[:, 1] < width_relations)
    array = array[inside]  # a triple outside the id ranges can never be generated
    return set(((array[:, 0] * width_relations + array[:, 1]) * width_entities + array[:, 2]).tolist())


def corrupt(positives: np.ndarray, num_entities: int, known: set | np.ndarray | Iterable, *, seed: int,
            per_positive: int = 1, type_consistent: bool, entity_types: Sequence[np.ndarray] | SideTypes | None = None,
            train_triples: np.ndarray | None = None, head_probability: float = 0.5) -> Negatives:
    """``per_positive`` corruptions of each positive (in order), each replacing the head (with probability
    ``head_probability``) or the tail by an entity drawn uniformly from all entities, or with
    ``type_consistent`` from the entities consistent with that side.

    A draw is refused when the triple is known (``known``: set of (h, r, t) tuples or an (m, 3) array, e.g.
    train + valid + test), equals the positive, or was already generated; after 64 refused draws the valid
    replacements of the side are listed and one is drawn among them; a side without any is left for the other
    side, and a slot where neither side has one is skipped (fewer negatives; :attr:`Negatives.positive` tells
    which positive each negative comes from).

    ``entity_types`` (with ``train_triples``, whose sides define the types, see the module docstring) are
    needed with ``type_consistent``; without them ``consistent`` is all False (unknown) for random corruptions.
    """
    positives = _as_triples(positives, "positives")
    if per_positive < 0:
        raise ValueError("per_positive must be >= 0")
    if not 0.0 <= head_probability <= 1.0:
        raise ValueError("head_probability must lie in [0, 1]")
    if len(positives) and positives[:, [0, 2]].max() >= num_entities:
        raise ValueError(f"positives hold entity ids beyond 0..{num_entities - 1}")
    num_relations = int(positives[:, 1].max()) + 1 if len(positives) else 1
    side_types: SideTypes | None = None
    if entity_types is not None:
        if train_triples is None and not isinstance(entity_types, SideTypes):
            raise ValueError("entity types need the train triples that define each relation side's types")
        side_types = _side_types(entity_types, train_triples, positives)
        if side_types.num_entities != num_entities:
            raise ValueError(f"entity types cover {side_types.num_entities} entities, not {num_entities}")
        if num_relations > side_types.num_relations:
            raise ValueError(f"positives hold relation ids beyond the {side_types.num_relations} of the entity types")
        num_relations = side_types.num_relations
    elif type_consistent:
        raise ValueError("type-consistent corruption needs entity types")
    known_keys = _known_keys(known, num_entities, num_relations)
    rng = np.random.default_rng(seed)
    all_entities = np.arange(num_entities)

    def key(h: int, r: int, t: int) -> int:
        return (h * num_relations + r) * num_entities + t

    rows: list[tuple[int, int, int]] = []
    replaced: list[int] = []
    source_positive: list[int] = []
    produced: set[int] = set()
    for index, (head, relation, tail) in enumerate(positives.tolist()):
        for _ in range(per_positive):
            first = HEAD_COLUMN if rng.random() < head_probability else TAIL_COLUMN
            for column in (first, TAIL_COLUMN if first == HEAD_COLUMN else HEAD_COLUMN):
                side = relation * 2 + (column == TAIL_COLUMN)
                pool = side_types.candidates(side) if type_consistent else all_entities
                original = head if column == HEAD_COLUMN else tail
                choice = _draw(rng, pool, original, lambda e: key(e, relation, tail) if column == HEAD_COLUMN
                               else key(head, relation, e), known_keys, produced)
                if choice is not None:
                    triple = (choice, relation, tail) if column == HEAD_COLUMN else (head, relation, choice)
                    produced.add(key(*triple))
                    rows.append(triple)
                    replaced.append(column)
                    source_positive.append(index)
                    break
    triples = np.array(rows, dtype=np.int64).reshape(-1, 3)
    replaced_array = np.array(replaced, dtype=np.int64)
    if type_consistent:
        consistent = np.ones(len(triples), dtype=bool)
    elif side_types is not None:
        consistent = type_consistency(triples, None, side_types, replaced=replaced_array)
    else:
        consistent = np.zeros(len(triples), dtype=bool)
    return Negatives(triples, consistent, "corrupted-typed" if type_consistent else "corrupted-random",
                     replaced_array, np.array(source_positive, dtype=np.int64))


def _draw(rng: np.random.Generator, pool: np.ndarray, original: int, key_of, known: set[int],
          produced: set[int]) -> int | None:
    """A replacement from ``pool`` that is not ``original`` and makes neither a known nor an already produced
    triple; None when there is none."""
    if not len(pool):
        return None
    for _ in range(_DRAWS_BEFORE_LISTING):
        entity = int(pool[rng.integers(len(pool))])
        candidate = key_of(entity)
        if entity != original and candidate not in known and candidate not in produced:
            return entity
    valid = [int(e) for e in pool if e != original and key_of(int(e)) not in known and key_of(int(e)) not in produced]
    return valid[rng.integers(len(valid))] if valid else None


# ------------------------------------------------------------------------------------------------ type files
def entity_types_from_lists(type_lists: Sequence[Iterable[str]]) -> tuple[list[np.ndarray], list[str]]:
    """Number type names: (per-entity int arrays, type names in id order: sorted)."""
    names = sorted({str(name) for types in type_lists for name in types})
    index = {name: i for i, name in enumerate(names)}
    return [np.array(sorted({index[str(name)] for name in types}), dtype=np.int64) for types in type_lists], names


def read_entity_types_json(path: str | Path, entity_index: Mapping[str, int]) -> tuple[list[np.ndarray], list[str]]:
    """CoDEx ``entity2types.json`` (entity key -> list of type ids) for the KG's entities (``entity_index``:
    key -> id); entities it does not list get no types, entries for other entities are ignored."""
    path = Path(path)
    lists: list[list[str]] = [[] for _ in range(len(entity_index))]
    for key, types in read_json_object(path).items():
        if key not in entity_index:
            continue
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise KGFormatError(path, None, f"types of {shown(key)} are not a list of strings")
        lists[entity_index[key]] = types
    return entity_types_from_lists(lists)


def read_signature_types(path: str | Path, relation_index: Mapping[str, int], train_triples: np.ndarray,
                         num_entities: int) -> tuple[list[np.ndarray], list[str]]:
    """FB15k-237 ``relation_types.tsv`` (``relation domain_type range_type``): each entity gets the domain type
    of the relations it heads in train and the range type of those it is the tail of. Relations the KG lacks are
    ignored; a KG relation the file lacks gives no type."""
    path = Path(path)
    domain = [""] * len(relation_index)
    range_ = [""] * len(relation_index)
    for key, (columns, _line) in read_keyed_table(path, 3, "relation domain range").items():
        if key in relation_index:
            domain[relation_index[key]], range_[relation_index[key]] = columns[0], columns[1]
    train = _as_triples(train_triples, "train triples")
    lists: list[set[str]] = [set() for _ in range(num_entities)]
    for head, relation, tail in np.unique(train, axis=0).tolist():
        if domain[relation]:
            lists[head].add(domain[relation])
        if range_[relation]:
            lists[tail].add(range_[relation])
    return entity_types_from_lists(lists)


def read_negatives_file(path: str | Path, entity_index: Mapping[str, int],
                        relation_index: Mapping[str, int]) -> np.ndarray:
    """A dataset's negatives (``h r t`` per line, e.g. CoDEx ``test_negatives.txt``) as KG ids [m, 3];
    an entity or relation the KG lacks is a :class:`~pooling.engine.kgfiles.KGFormatError` naming file:line."""
    path = Path(path)
    rows = read_triple_file(path)
    triples = np.empty((len(rows), 3), dtype=np.int64)
    for position, (head, relation, tail, line) in enumerate(rows):
        for column, (name, vocabulary, what) in enumerate(((head, entity_index, "entity"),
                                                           (relation, relation_index, "relation"),
                                                           (tail, entity_index, "entity"))):
            if name not in vocabulary:
                raise KGFormatError(path, line, f"unknown {what} {shown(name)} (not in the knowledge graph)")
            triples[position, column] = vocabulary[name]
    return triples
