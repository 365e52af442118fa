"""Property prediction: questions, filtered ranks with ties, MRR / MR / Hits@K by hand."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core.property_prediction import property_metrics, property_questions, property_ranks

TRAIN = np.array([(0, 0, 5), (2, 1, 3), (1, 2, 0)], dtype=np.int64)
TEST = np.array([(0, 1, 7), (0, 1, 8), (0, 2, 9), (1, 3, 4), (2, 1, 6)], dtype=np.int64)
# Relation scores of heads 0, 1, 2 (4 relations).
SCORES = np.array([[5.0, 3.0, 4.0, 4.0],
                   [1.0, 1.0, 9.0, 0.0],
                   [0.0, 0.0, 0.0, 0.0]])


def scorer(heads: np.ndarray) -> np.ndarray:
    return SCORES[heads]


def test_questions_are_new_head_relation_pairs() -> None:
    heads, relations = property_questions(TRAIN, TEST)
    # (0, 1) once although twice in test; (2, 1) is already in train
    assert list(zip(heads.tolist(), relations.tolist())) == [(0, 1), (0, 2), (1, 3)]


@pytest.mark.parametrize("batch_size", [1, 2, 10])
def test_filtered_ranks_by_hand(batch_size: int) -> None:
    heads, relations = property_questions(TRAIN, TEST)
    # (0, 1): r0 is known for head 0 (filtered out); r2 = r3 = 4 > 3: rank 3
    # (0, 2): r3 ties with 4, r1 lower, r0 filtered: 1 + 0 + 1/2
    # (1, 3): r2 (9) is known for head 1 and filtered; r0 = r1 = 1 > 0: rank 3
    ranks = property_ranks(scorer, heads, relations, TRAIN, batch_size=batch_size)
    assert ranks.tolist() == [3.0, 1.5, 3.0]
    assert property_ranks(scorer, heads, relations, TRAIN, policy="optimistic").tolist() == [3.0, 1.0, 3.0]
    assert property_ranks(scorer, heads, relations, TRAIN, policy="pessimistic").tolist() == [3.0, 2.0, 3.0]
    metrics = property_metrics(ranks, hits=(1, 3))
    assert metrics["MRR"] == pytest.approx((1 / 3 + 1 / 1.5 + 1 / 3) / 3)
    assert metrics["MR"] == pytest.approx(7.5 / 3)
    assert metrics["Hits@1"] == 0.0 and metrics["Hits@3"] == 1.0


def test_more_known_pairs_filter_more_and_target_is_kept() -> None:
    heads, relations = np.array([0]), np.array([1])
    # known also holds (0, 2) and the target (0, 1) itself: r2 goes, the target stays; r3 = 4 > 3: rank 2
    known = np.array([(0, 0), (0, 2), (0, 1)])
    assert property_ranks(scorer, heads, relations, known).tolist() == [2.0]
    assert property_ranks(scorer, heads, relations, set()).tolist() == [4.0]  # unfiltered: r0, r2, r3 above


def test_nan_scores_count_as_minus_infinity() -> None:
    scores = np.array([[np.nan, 0.0, -np.inf]])
    ranks = property_ranks(lambda h: scores[h * 0], np.array([0, 0]), np.array([1, 0]), set())
    # target r1 (0.0) beats both; target r0 (NaN = -inf) ties with r2 (-inf), below r1: 1 + 1 + 1/2
    assert ranks.tolist() == [1.0, 2.5]


def test_bad_scorer_shape() -> None:
    with pytest.raises(ValueError):
        property_ranks(lambda h: SCORES[h][:, :2], np.array([0]), np.array([3]), TRAIN)
