"""Reads: statistics of a KG's triples that pages ask for on every request (relation categories, how many known
answers a question has, role counts of candidate entities), computed once per KG and kept in a file next to
its arrays (issue 18: on 5M triples each took seconds per page view).

A KG's arrays never change after its import (a re-import is a new KG), so the cache, named after the KG's pk,
import time and arrays file, is never stale; missing or unreadable, it is recomputed.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pooling.engine.categories import distinct_rows, relation_categories
from pooling.engine.questions import HEAD, Questions
from pooling.models import KnowledgeGraph
from pooling.selectors.kg import kg_triples
from pooling.storage import storage_path

VERSION = 1


@dataclass(frozen=True)
class KGStats:
    """``role_keys`` (sorted) / ``role_counts``: (relation * 2 + role) * E + entity of every distinct known triple
    (train + valid + test), role 0 the head, 1 the tail, with how many distinct triples have it; the same from the
    TRAIN split alone (``train_role_*``); ``degree``: train degree of each entity; ``relation_size``: train triples
    per relation; ``tph`` / ``hpt``: mean distinct tails per (r, h) / heads per (r, t) in train."""

    num_entities: int
    role_keys: np.ndarray
    role_counts: np.ndarray
    train_role_keys: np.ndarray
    train_role_counts: np.ndarray
    degree: np.ndarray
    relation_size: np.ndarray
    tph: np.ndarray
    hpt: np.ndarray

    def categories(self, threshold: float = 1.5) -> np.ndarray:
        """Relation index -> '1-1' / '1-N' / 'N-1' / 'N-N' (as ``pooling.engine.categories``)."""
        from pooling.engine.categories import CATEGORIES

        index = (self.tph >= threshold).astype(int) + 2 * (self.hpt >= threshold).astype(int)
        return np.array(CATEGORIES, dtype=object)[index].astype("<U3")

    def known_answer_counts(self, questions: Questions) -> np.ndarray:
        """Known answers (train + valid + test) of each question: a HEAD question (?, r, anchor) counts the
        triples with ``anchor`` as tail, a TAIL question the triples with ``anchor`` as head."""
        role = np.where(np.asarray(questions.side) == HEAD, 1, 0)
        return _lookup(self.role_keys, self.role_counts, (questions.relation * 2 + role) * self.num_entities
                       + questions.anchor)

    def train_role_count(self, relations: np.ndarray, roles: np.ndarray, entities: np.ndarray) -> np.ndarray:
        return _lookup(self.train_role_keys, self.train_role_counts,
                       (np.asarray(relations) * 2 + np.asarray(roles)) * self.num_entities + np.asarray(entities))


def _lookup(keys: np.ndarray, counts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    wanted = np.asarray(wanted, dtype=np.int64)
    if not keys.size:
        return np.zeros(wanted.shape, dtype=np.int64)
    position = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    return np.where(keys[position] == wanted, counts[position], 0)


def _role_table(triples: np.ndarray, num_entities: int) -> tuple[np.ndarray, np.ndarray]:
    heads, relations, tails = distinct_rows(triples[:, 0], triples[:, 1], triples[:, 2])
    keys = np.sort(np.concatenate([(relations * 2) * num_entities + heads, (relations * 2 + 1) * num_entities + tails]))
    if not keys.size:
        return keys, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.diff(np.append(starts, keys.size))


def compute_kg_stats(arrays: dict[str, np.ndarray], num_entities: int, num_relations: int) -> KGStats:
    train = np.asarray(arrays["train"], dtype=np.int64).reshape(-1, 3)
    known = np.concatenate([np.asarray(arrays[s], dtype=np.int64).reshape(-1, 3) for s in ("train", "valid", "test")])
    size = max(num_entities, int(known[:, [0, 2]].max(initial=-1)) + 1, 1)
    relations = max(num_relations, int(known[:, 1].max(initial=-1)) + 1, 1)
    role_keys, role_counts = _role_table(known, size)
    train_keys, train_counts = _role_table(train, size)
    _categories, tph, hpt = relation_categories(train, relations)
    return KGStats(size, role_keys, role_counts, train_keys, train_counts,
                   np.bincount(train[:, 0], minlength=size) + np.bincount(train[:, 2], minlength=size),
                   np.bincount(train[:, 1], minlength=relations), tph, hpt)


def _cache_folder(kg: KnowledgeGraph) -> str:
    # pk, import time and arrays file name one import: a rolled-back test KG may leave its pk and path to the next
    stem = kg.arrays_file.rsplit("/", 1)[-1].removesuffix(".npz")
    return f"kg-stats/{kg.pk}/{kg.created_at:%Y%m%dT%H%M%S%f}-{stem}-v{VERSION}"


def kg_stats(kg: KnowledgeGraph) -> KGStats:
    """The KG's statistics: one .npy file per array, memory-mapped (a page view reads the few rows it looks up,
    not the whole tables), written on first use."""
    folder = storage_path(_cache_folder(kg))
    names = list(KGStats.__dataclass_fields__)
    if all((folder / f"{name}.npy").exists() for name in names):
        try:
            arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in names}
            return KGStats(**{**arrays, "num_entities": int(arrays["num_entities"])})
        except (OSError, ValueError):
            pass  # unreadable: recompute and rewrite
    stats = compute_kg_stats(kg_triples(kg), kg.num_entities, kg.num_relations)
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + ".part"))
    for name in names:
        np.save(partial / f"{name}.npy", np.asarray(getattr(stats, name)))
    try:
        partial.rename(folder)  # atomic: readers see all the files or none
    except OSError:  # another process wrote it meanwhile
        shutil.rmtree(partial, ignore_errors=True)
    return stats
