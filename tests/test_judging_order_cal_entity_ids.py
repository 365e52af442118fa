"""cal_order.candidate_features when train or the candidates name entities at or beyond ``num_entities`` (issue 19):
the key radix grows to the largest id of the candidates, the heads and the tails, so every (relation, side,
entity) role keeps its own count. Against loops over the triples. Django-free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import cal_order as lib


def by_loops(candidates, relations, sides, train):
    rows = []
    for c, r, s in zip(candidates, relations, sides):
        degree = sum(h == c for h, _, _ in train) + sum(t == c for _, _, t in train)
        role = sum(1 for h, rr, t in train if rr == r and (t if s == 1 else h) == c)
        size = sum(1 for _, rr, _ in train if rr == r)
        rows.append([math.log1p(degree), math.log1p(role), float(role > 0), math.log((role + 1) / (size + 1))])
    return rows


@pytest.mark.parametrize("train, candidates, relations, sides", [
    # the largest id is a head: a radix from the tails and candidates alone is too small
    ([[5, 0, 1]], [1], [0], [1]),
    ([[5, 0, 1], [1, 0, 0]], [1, 5, 0], [0, 0, 0], [0, 0, 1]),
    # the largest id is a tail, next to a smaller head
    ([[0, 0, 4], [2, 1, 3]], [3, 4, 0], [1, 0, 0], [1, 1, 0]),
    ([[3, 0, 4], [4, 0, 3], [0, 0, 4]], [4, 3, 0], [0, 0, 0], [0, 1, 0]),
])
@pytest.mark.parametrize("num_entities", [0, 1, 2])
def test_ids_beyond_num_entities(train, candidates, relations, sides, num_entities):
    got = lib.candidate_features(candidates, relations, sides, np.array(train), num_entities)
    assert np.allclose(got, by_loops(candidates, relations, sides, [tuple(t) for t in train]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_random_kgs_with_too_small_num_entities(seed):
    rng = np.random.default_rng(seed)
    entities, relations = int(rng.integers(2, 8)), int(rng.integers(1, 3))
    train = rng.integers(0, [entities, relations, entities], size=(int(rng.integers(1, 12)), 3))
    k = int(rng.integers(1, 6))
    candidates, rel, sides = rng.integers(0, entities, k), rng.integers(0, relations, k), rng.integers(0, 2, k)
    got = lib.candidate_features(candidates, rel, sides, train, int(rng.integers(0, 2)))
    expected = by_loops(candidates.tolist(), rel.tolist(), sides.tolist(), [tuple(t) for t in train.tolist()])
    assert np.allclose(got, expected, rtol=0, atol=1e-12)
