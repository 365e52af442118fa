"""Entity blocks (issue 18): ranking entities a block at a time gives exactly the unblocked results, which agree
with the brute-force reference, ties, NaN, +-inf, filters and targets inside the filter included."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pooling.engine import ranking
from pooling.engine.questions import Ragged
from pooling.engine.ranking import RankingResult, entity_block_size, rank, score_fn_from_matrix
from tests.test_rank_bruteforce import assert_matches, random_case, reference, row_score_fn


class BlockRows:
    """A score function with ``score_block``, over a matrix found by relation/side (the two-pass path: the
    targets' scores come from their blocks). Records the (rows, columns) of every call."""

    def __init__(self, scores: np.ndarray, questions) -> None:
        self.full = row_score_fn(scores, questions)
        self.calls: list[tuple[int, int]] = []

    def __call__(self, anchor, relation, side):
        result = self.full(anchor, relation, side)
        self.calls.append(tuple(result.shape))
        return result

    def score_block(self, anchor, relation, side, start, stop):
        result = self.full(anchor, relation, side)[:, start:stop].clone()
        self.calls.append(tuple(result.shape))
        return result


def assert_same(result: RankingResult, other: RankingResult) -> None:
    for name, array in result.to_arrays().items():
        np.testing.assert_array_equal(array, other.to_arrays()[name], err_msg=name)


@pytest.mark.parametrize("seed, integer_scores, with_nan", [(0, True, False), (1, True, True), (2, False, True),
                                                           (3, False, False)])
@pytest.mark.parametrize("k", [4, 40])  # 40: more than the candidates -> -1 / NaN padding
def test_blocks_match_unblocked_and_bruteforce(seed: int, integer_scores: bool, with_nan: bool, k: int) -> None:
    num_entities = 37
    scores, questions, filter_sets, target_lists = random_case(seed, 30, num_entities, integer_scores, with_nan,
                                                               max_targets=9)
    expected = reference(scores, filter_sets, target_lists, k)
    filter_ragged = Ragged.from_lists([sorted(s) for s in filter_sets])
    targets = Ragged.from_lists(target_lists)
    common = dict(num_entities=num_entities, filter=filter_ragged, targets=targets, k=k)
    unblocked = rank(score_fn_from_matrix(scores), questions, **common)
    assert_matches(unblocked, expected, k)
    for block in (1, 5, 8, 36):  # 5, 8, 36 do not divide 37
        for batch_size in (7, 1024)[block == 1:]:
            by_matrix = rank(score_fn_from_matrix(scores), questions, batch_size=batch_size, entity_block=block,
                             **common)
            assert_same(by_matrix, unblocked)
            by_blocks = rank(BlockRows(scores, questions), questions, batch_size=batch_size, entity_block=block,
                             **common)
            assert_same(by_blocks, unblocked)
        by_keys = rank(score_fn_from_matrix(scores, questions), questions, entity_block=block, **common)
        assert_same(by_keys, unblocked)


def test_boundary_ties_across_blocks() -> None:
    # every entity scores the same: the top-k is the k smallest unfiltered ids, spread over blocks
    scores = np.zeros((2, 10), dtype=np.float32)
    scores[1, [3, 7]] = -np.inf
    filter_ragged = Ragged.from_lists([[0, 4], [1, 2, 5, 6, 8, 9]])
    targets = Ragged.from_lists([[4, 9], [3, 7, 0]])
    result = rank(score_fn_from_matrix(scores), _questions(2), num_entities=10, filter=filter_ragged,
                  targets=targets, k=5, entity_block=3)
    np.testing.assert_array_equal(result.topk_entities, [[1, 2, 3, 5, 6], [0, 4, 3, 7, -1]])
    np.testing.assert_array_equal(result.greater, [0, 0, 2, 2, 0])
    np.testing.assert_array_equal(result.ties, [8, 7, 1, 1, 1])  # q1: 3 and 7 tie at -inf, 0 with 4


def _questions(count: int):
    from pooling.engine.questions import TAIL, Questions

    return Questions(np.arange(count), np.arange(count), np.full(count, TAIL))


def test_entity_block_size() -> None:
    assert entity_block_size(10, 1000, memory_budget=40_000) is None  # fits exactly
    assert entity_block_size(100, 10**6, memory_budget=100 * 10**6 * 4) is None
    # 1M entities, 100 rows, 40 MB: 100,000 entities per block, balanced
    assert entity_block_size(100, 10**6, memory_budget=40 * 10**6) == 100_000
    block = entity_block_size(100, 10**6 + 1, memory_budget=40 * 10**6)
    assert block == 90_910 and -(-(10**6 + 1) // block) == 11  # 11 blocks, the last not a narrow remainder
    assert entity_block_size(1000, 10**6, memory_budget=1) == 4099  # 244 blocks: none below the minimum width
    assert entity_block_size(1000, ranking.MIN_AUTO_BLOCK + 7, memory_budget=1) is None


def test_memory_budget_picks_blocks_or_smaller_batches() -> None:
    num_entities, num_questions = 3 * ranking.MIN_AUTO_BLOCK + 5, 6
    scores, questions, filter_sets, target_lists = random_case(5, num_questions, num_entities, True, False)
    common = dict(num_entities=num_entities, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=7)
    unblocked = rank(score_fn_from_matrix(scores), questions, **common)
    budget = 4 * num_questions * ranking.MIN_AUTO_BLOCK  # room for one minimum block of the largest batch
    blocked = BlockRows(scores, questions)
    assert_same(rank(blocked, questions, memory_budget=budget, **common), unblocked)
    assert max(columns for _rows, columns in blocked.calls) == 4098  # 3 balanced blocks at the minimum width
    assert_same(rank(score_fn_from_matrix(scores), questions, memory_budget=budget, **common), unblocked)

    plain = row_score_fn(scores, questions)  # no score_block: fewer questions at a time instead
    rows_seen: list[int] = []

    def recording(anchor: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        rows_seen.append(int(anchor.numel()))
        return plain(anchor, relation, side)

    assert_same(rank(recording, questions, memory_budget=4 * 2 * num_entities, **common), unblocked)
    assert max(rows_seen) == 2
    with pytest.raises(TypeError, match="score_block"):
        rank(plain, questions, entity_block=100, **common)


@pytest.mark.parametrize("block", [None, 3, 8, 37])
def test_sparse_scores_rank_as_their_dense_matrix(block: int | None) -> None:
    # a run: some entities per question (ties, a NaN, -inf), every other entity -inf (not retrieved)
    num_entities = 37
    scores, questions, filter_sets, target_lists = random_case(7, 30, num_entities, True, True, max_targets=9)
    rng = np.random.default_rng(3)
    given = rng.random(scores.shape) < 0.3
    dense = np.where(given, scores, -np.inf).astype(np.float64)
    rows, entities = np.nonzero(given)  # row-major: entities sorted inside each row
    offsets = np.concatenate([[0], np.cumsum(given.sum(axis=1))])
    sparse = ranking.SparseScores(offsets, entities, dense[rows, entities], num_entities)
    common = dict(num_entities=num_entities, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=6)
    expected = rank(score_fn_from_matrix(dense), questions, **common)
    assert_matches(expected, reference(dense, filter_sets, target_lists, 6), 6)
    assert_same(rank(sparse, questions, batch_size=7, entity_block=block, **common), expected)
