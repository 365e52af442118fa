"""Relation categories: hand case and the published FB15k-237 counts (SPEC 4.1)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pooling.engine.categories import relation_categories


def test_hand_case() -> None:
    triples = np.array(
        [
            [0, 0, 1],  # relation 0: one tail per head, one head per tail -> 1-1
            [2, 0, 3],
            [0, 1, 1],  # relation 1: head 0 has 2 tails -> tph 2 -> 1-N
            [0, 1, 2],
            [0, 1, 2],  # duplicate triple counts once
            [1, 2, 0],  # relation 2: two heads per tail -> N-1
            [2, 2, 0],
        ]
    )
    categories, tph, hpt = relation_categories(triples, num_relations=4)
    assert categories.tolist() == ["1-1", "1-N", "N-1", "1-1"]  # relation 3 absent -> 1-1, tph 0
    np.testing.assert_allclose(tph, [1.0, 2.0, 1.0, 0.0])
    np.testing.assert_allclose(hpt, [1.0, 1.0, 2.0, 0.0])


def load_ids(path: Path) -> np.ndarray:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line]
    relations = {r: i for i, r in enumerate(sorted({row[1] for row in rows}))}
    entities = {e: i for i, e in enumerate(sorted({row[0] for row in rows} | {row[2] for row in rows}))}
    return np.array([[entities[h], relations[r], entities[t]] for h, r, t in rows], dtype=np.int64)


@pytest.mark.slow
def test_fb15k237_counts(shared_data: Path) -> None:
    train = load_ids(shared_data / "fb15k-237" / "train.txt")
    categories, _, _ = relation_categories(train, num_relations=237)
    assert Counter(categories.tolist()) == {"1-1": 17, "1-N": 26, "N-1": 86, "N-N": 108}
