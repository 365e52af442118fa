"""Minimal Django-free loader for `h<TAB>r<TAB>t` split files (train/valid/test.txt)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

SPLITS = ("train", "valid", "test")


def load_triples(directory: str | Path, splits: tuple[str, ...] = SPLITS
                 ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """Read ``<split>.txt`` files of a dataset folder and map names to dense ids.

    Returns ``(triples, entities, relations)``: ``triples[split]`` is an int64 array (n, 3) of
    (head, relation, tail) ids; ids are assigned in order of first appearance over the splits in the
    given order, so the mapping is deterministic. Missing split files are skipped.
    """
    directory = Path(directory)
    entity_ids: dict[str, int] = {}
    relation_ids: dict[str, int] = {}
    triples: dict[str, np.ndarray] = {}
    for split in splits:
        path = directory / f"{split}.txt"
        if not path.is_file():
            continue
        rows = []
        with path.open(encoding="utf-8") as lines:
            for line_number, line in enumerate(lines, 1):
                line = line.rstrip("\r\n")
                if not line:
                    continue
                parts = line.split("\t")
                if len(parts) != 3:
                    raise ValueError(f"{path}:{line_number}: expected 3 tab-separated fields, got {len(parts)}")
                head, relation, tail = parts
                rows.append((entity_ids.setdefault(head, len(entity_ids)),
                             relation_ids.setdefault(relation, len(relation_ids)),
                             entity_ids.setdefault(tail, len(entity_ids))))
        triples[split] = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    return triples, list(entity_ids), list(relation_ids)
