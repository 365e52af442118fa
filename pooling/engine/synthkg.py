"""A seeded synthetic knowledge graph with power-law degrees, for benchmarks and tests (Django-free).

Entities and relations are drawn from Zipf-like distributions (probability of the k-th most popular proportional
to 1 / k**exponent), so a few hubs carry many triples and most entities few, as in Freebase or Wikidata. The same
seed gives the same files, byte for byte.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPLIT_SHARES = {"train": 0.9, "valid": 0.05, "test": 0.05}


@dataclass(frozen=True)
class SyntheticKG:
    triples: int
    entities: int
    relations: int = 500
    seed: int = 0
    exponent: float = 1.0  # Zipf exponent of entity and relation popularity


class _Zipf:
    """Draws ids with probability proportional to 1 / rank**exponent; ranks are given to ids at random, so that
    popular ids are not simply the small numbers."""

    def __init__(self, rng: np.random.Generator, size: int, exponent: float) -> None:
        cumulative = np.cumsum(1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent)
        self.cumulative = cumulative / cumulative[-1]
        self.id_of_rank = rng.permutation(size)

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        ranks = np.searchsorted(self.cumulative, rng.random(count), side="right")
        return self.id_of_rank[np.minimum(ranks, len(self.id_of_rank) - 1)]


def generate(spec: SyntheticKG) -> dict[str, np.ndarray]:
    """split -> int64 (n, 3) distinct triples (head, relation, tail), no self-loops; about ``spec.triples`` in all."""
    rng = np.random.default_rng(spec.seed)
    wanted = spec.triples
    entity_draw = _Zipf(rng, spec.entities, spec.exponent)
    relation_draw = _Zipf(rng, spec.relations, spec.exponent)
    triples = np.empty((0, 3), dtype=np.int64)
    for _attempt in range(100):  # dense small graphs repeat often: draw again until there are enough
        drawn = int((wanted - len(triples)) * 1.1) + 16
        heads, tails = entity_draw.draw(rng, drawn), entity_draw.draw(rng, drawn)
        relations = relation_draw.draw(rng, drawn)
        fresh = np.stack([heads, relations, tails], axis=1).astype(np.int64)[heads != tails]
        triples = np.concatenate([triples, fresh])
        _unique, first = np.unique(triples, axis=0, return_index=True)
        triples = triples[np.sort(first)]
        if len(triples) >= wanted:
            break
    else:
        raise ValueError(f"cannot draw {wanted:,} distinct triples over {spec.entities:,} entities")
    triples = triples[:wanted]
    bounds = np.cumsum([int(len(triples) * SPLIT_SHARES[s]) for s in ("train", "valid")])
    parts = np.split(triples, bounds)
    return dict(zip(SPLIT_SHARES, parts))


def write(spec: SyntheticKG, folder: Path | str) -> dict[str, int]:
    """Write train/valid/test.txt (`Q<id>\\tP<id>\\tQ<id>`) into ``folder``; returns the triples per split."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, triples in generate(spec).items():
        with open(folder / f"{split}.txt", "w", encoding="utf-8", newline="\n") as stream:
            for start in range(0, len(triples), 100_000):
                block = triples[start:start + 100_000]
                stream.write("".join(f"Q{h}\tP{r}\tQ{t}\n" for h, r, t in block.tolist()))
        counts[split] = len(triples)
    return counts
