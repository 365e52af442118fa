"""Blocked top-K pair ranking against a brute-force sort of all E x E pairs (ties, NaN, -inf, exclusions)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluation.core.pair_ranking import KnownPairs, known_pairs_by_relation, top_pairs, top_pairs_by_relation

E, R = 23, 3


def brute_force(scores: np.ndarray, excluded: set[tuple[int, int]], k: int) -> list[tuple[int, int, float]]:
    rows = []
    for h in range(scores.shape[0]):
        for t in range(scores.shape[1]):
            if (h, t) in excluded:
                continue
            value = float(scores[h, t])
            rows.append((-np.inf if np.isnan(value) else value, h, t))
    rows.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [(h, t, s) for s, h, t in rows[:k]]


@pytest.fixture(scope="module")
def kg() -> tuple[np.ndarray, dict[int, set[tuple[int, int]]]]:
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 6, size=(R, E, E)).astype(np.float32)  # few values: many ties
    scores[0] += rng.normal(size=(E, E)).astype(np.float32)           # relation 0: almost no ties
    scores[1][rng.random((E, E)) < 0.05] = np.nan
    scores[2][rng.random((E, E)) < 0.1] = -np.inf
    excluded = {r: {(int(h), int(t)) for h, t in rng.integers(0, E, size=(60, 2))} for r in range(R)}
    return scores, excluded


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_blocked_equals_brute_force(kg, backend: str) -> None:
    scores, excluded = kg

    def score_block(relation: int, heads: np.ndarray):
        block = scores[relation][heads].copy()
        return torch.from_numpy(block) if backend == "torch" else block

    for relation in range(R):
        for k in (1, 4, 37, E * E):
            expected = brute_force(scores[relation], excluded[relation], k)
            for block_size in (1, 2, 5, 7, 22, 23, 64):
                top = top_pairs(score_block, relation, E, k, block_size=block_size, exclude=excluded[relation])
                got = list(zip(top.heads.tolist(), top.tails.tolist(), top.scores.tolist()))
                assert got == expected, (relation, k, block_size)


def test_exclusion_forms_agree_and_excluded_never_returned(kg) -> None:
    scores, excluded = kg
    triples = np.array([(h, r, t) for r, pairs in excluded.items() for h, t in pairs], dtype=np.int64)
    by_relation = known_pairs_by_relation(triples, E)
    array = np.array(sorted(excluded[1]), dtype=np.int64)
    results = [top_pairs(lambda r, h: scores[r][h].copy(), 1, E, E * E, block_size=4, exclude=form).pairs()
               for form in (excluded[1], array, by_relation[1], KnownPairs(array[:, 0], array[:, 1], E))]
    assert all(result == results[0] for result in results)
    assert len(results[0]) == E * E - len(excluded[1])
    assert not set(results[0]) & excluded[1]
    assert all(pair in by_relation[1] for pair in excluded[1])
    outside = next((h, t) for h in range(E) for t in range(E) if (h, t) not in excluded[1])
    assert outside not in by_relation[1]


def test_scorer_shape_checked() -> None:
    with pytest.raises(ValueError, match="shape"):
        top_pairs(lambda r, h: np.zeros((len(h), E - 1)), 0, E, 5)
    with pytest.raises(ValueError):
        top_pairs(lambda r, h: np.zeros((len(h), E)), 0, E, 0)


def test_accelerator_selection_matches_exact(kg) -> None:
    # The torch.topk path used for tensors on an accelerator, run here on CPU tensors: same pairs, same order.
    from evaluation.core.pair_ranking import _exact_block_top, _torch_block_top

    scores, excluded = kg
    for relation in range(R):
        offsets = np.array(sorted(h * E + t for h, t in excluded[relation]), dtype=np.int64)
        for k in (1, 3, 50, E * E):
            got, values = _torch_block_top(torch.from_numpy(scores[relation].copy()), offsets, k)
            expected = _exact_block_top(scores[relation].reshape(-1).copy(), offsets, k)
            assert got.tolist() == expected.tolist(), (relation, k)
            flat = scores[relation].reshape(-1)[expected].astype(np.float64)
            assert np.array_equal(values, np.where(np.isnan(flat), -np.inf, flat))


def test_integer_and_half_precision_blocks(kg) -> None:
    scores, excluded = kg
    integers = np.floor(np.nan_to_num(scores[0], nan=0.0)).astype(np.int64)  # ties everywhere
    expected = brute_force(integers.astype(np.float64), excluded[0], 30)
    for to_block in (lambda heads: integers[heads].copy(),
                     lambda heads: torch.from_numpy(integers[heads].copy()),
                     lambda heads: torch.from_numpy(integers[heads].astype(np.float32)).to(torch.bfloat16)):
        top = top_pairs(lambda r, heads: to_block(heads), 0, E, 30, block_size=5, exclude=excluded[0])
        assert list(zip(top.heads.tolist(), top.tails.tolist(), top.scores.tolist())) == expected


def test_all_relations_at_once(kg) -> None:
    scores, excluded = kg
    triples = np.array([(h, r, t) for r, pairs in excluded.items() for h, t in pairs], dtype=np.int64)
    tops = top_pairs_by_relation(lambda r, h: scores[r][h].copy(), range(R), E, 9, block_size=4,
                                 known=known_pairs_by_relation(triples, E))
    assert sorted(tops) == list(range(R))
    for r in range(R):
        assert tops[r].pairs() == [(h, t) for h, t, _ in brute_force(scores[r], excluded[r], 9)]
