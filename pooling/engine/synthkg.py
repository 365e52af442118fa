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


def _zipf_draw(rng: np.random.Generator, size: int, count: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    drawn = np.searchsorted(cumulative, rng.random(count), side="right")
    # Popularity rank -> id: shuffle so that popular ids are not simply the small numbers.
    return rng.permutation(size)[np.minimum(drawn, size - 1)]


def generate(spec: SyntheticKG) -> dict[str, np.ndarray]:
    """split -> int64 (n, 3) distinct triples (head, relation, tail), no self-loops; about ``spec.triples`` in all."""
    rng = np.random.default_rng(spec.seed)
    wanted = spec.triples
    drawn = int(wanted * 1.1) + 16  # room for the repeats and self-loops removed below
    heads = _zipf_draw(rng, spec.entities, drawn, spec.exponent)
    tails = _zipf_draw(rng, spec.entities, drawn, spec.exponent)
    relations = _zipf_draw(rng, spec.relations, drawn, spec.exponent)
    triples = np.stack([heads, relations, tails], axis=1).astype(np.int64)
    triples = triples[heads != tails]
    _unique, first = np.unique(triples, axis=0, return_index=True)
    triples = triples[np.sort(first)][:wanted]
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
            for start in range(0, len(triples), 1_000_000):
                block = triples[start:start + 1_000_000]
                stream.write("".join(f"Q{h}\tP{r}\tQ{t}\n" for h, r, t in block.tolist()))
        counts[split] = len(triples)
    return counts
