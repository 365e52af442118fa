"""The passes of the entity-blocked ranking (issue 19: the blocked path's mutants): stored scores (the targets'
scores known beforehand) fetch each block once; a score function's blocks are fetched once, then the blocks before
a target's block once more to count them; NaN is turned into -inf only in a block where the first pass met one.
Results are checked against the brute-force reference each time."""
from __future__ import annotations

import numpy as np
import torch

from pooling.engine import ranking
from pooling.engine.questions import TAIL, Questions, Ragged
from pooling.engine.ranking import MatrixScores, SparseScores, rank
from tests.test_rank_bruteforce import assert_matches, reference

SCORES = np.array([[5, 1, 9, 3, 2, 8, 7, 0, 6, 4],
                   [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]], dtype=np.float32)
QUESTIONS = Questions(np.array([0, 1]), np.array([0, 1]), np.array([TAIL, TAIL], dtype=np.int8))
FILTER = [{2}, {9}]
TARGETS = [[7], [4, 1]]  # blocks of 3: entity 7 in block 2; entities 4 and 1 in blocks 1 and 0


class Counted(MatrixScores):
    """A MatrixScores that records the columns of every fetch (by question index, or by key with questions)."""

    def __init__(self, scores, questions=None):
        super().__init__(scores, questions)
        self.fetched: list[tuple[int, int | None]] = []

    def rows(self, question_indices, device, start=0, stop=None):
        self.fetched.append((start, stop))
        return super().rows(question_indices, device, start, stop)


def run(score_fn, scores=SCORES):
    return rank(score_fn, QUESTIONS, num_entities=scores.shape[1], filter=Ragged.from_lists([sorted(s) for s in FILTER]),
                targets=Ragged.from_lists(TARGETS), k=4, entity_block=3)


def test_stored_scores_fetch_each_block_once():
    counted = Counted(SCORES)
    assert_matches(run(counted), reference(SCORES, FILTER, TARGETS, 4), 4)
    assert counted.fetched == [(0, 3), (3, 6), (6, 9), (9, 10)]  # both questions in one batch


def test_a_score_function_fetches_the_blocks_before_a_target_again():
    counted = Counted(SCORES, QUESTIONS)  # with questions: called by key, through score_block
    assert_matches(run(counted), reference(SCORES, FILTER, TARGETS, 4), 4)
    # the latest target block is 2 (entity 7): blocks 0 and 1 again
    assert counted.fetched == [(0, 3), (3, 6), (6, 9), (9, 10), (0, 3), (3, 6)]


def test_sparse_scores_fetch_each_block_once(monkeypatch):
    seen: list[tuple[int, int]] = []
    original = SparseScores.rows

    def rows(self, question_indices, device, start=0, stop=None):
        seen.append((start, stop))
        return original(self, question_indices, device, start, stop)

    monkeypatch.setattr(SparseScores, "rows", rows)
    row_ids, entity_ids = np.nonzero(np.ones_like(SCORES, dtype=bool))
    sparse = SparseScores(np.array([0, 10, 20]), entity_ids, SCORES[row_ids, entity_ids], 10)
    assert_matches(run(sparse), reference(SCORES, FILTER, TARGETS, 4), 4)
    assert seen == [(0, 3), (3, 6), (6, 9), (9, 10)]


def nan_calls(monkeypatch) -> list[bool]:
    """For every call of ranking._without_nan: whether its tensor held a NaN."""
    calls: list[bool] = []
    original = ranking._without_nan

    def spy(scores: torch.Tensor) -> torch.Tensor:
        calls.append(bool(torch.isnan(scores).any()))
        return original(scores)

    monkeypatch.setattr(ranking, "_without_nan", spy)
    return calls


def test_no_nan_pass_without_nan(monkeypatch):
    calls = nan_calls(monkeypatch)
    assert_matches(run(Counted(SCORES, QUESTIONS)), reference(SCORES, FILTER, TARGETS, 4), 4)
    assert calls == []


def test_the_nan_pass_only_in_the_block_that_held_one(monkeypatch):
    scores = SCORES.copy()
    scores[0, 4] = np.nan  # a candidate of block 1, which the second pass fetches again
    calls = nan_calls(monkeypatch)
    counted = Counted(scores, QUESTIONS)
    assert_matches(run(counted, scores), reference(scores, FILTER, TARGETS, 4), 4)
    assert calls == [True, True]  # block 1 in the first pass (its top-k met the NaN), then in the second
    assert counted.fetched == [(0, 3), (3, 6), (6, 9), (9, 10), (0, 3), (3, 6)]
