"""Independent counting of dataset files, for checking what the importer stored."""
from __future__ import annotations

from pathlib import Path


def count_dataset(folder: Path) -> dict[str, int]:
    """Entities, relations and distinct triples per split, counted straight from the text files."""
    entities: set[str] = set()
    relations: set[str] = set()
    counts: dict[str, int] = {}
    for split in ("train", "valid", "test"):
        triples = set()
        for line in (folder / f"{split}.txt").read_text(encoding="utf-8").splitlines():
            if line.strip():
                head, relation, tail = line.split()
                triples.add((head, relation, tail))
                entities.update((head, tail))
                relations.add(relation)
        counts[split] = len(triples)
    return {"entities": len(entities), "relations": len(relations), **counts}
