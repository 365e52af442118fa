"""Property prediction (evaluation.core.property_prediction), the rules the hand-computed tests leave open
(issue 19, mutation testing): the input forms of the known pairs and their refusal, questions whose relation
ids exceed train's, every refusal of property_ranks whole, the scorer called once per distinct head in batches,
known pairs outside the scorer's relations, no question, the default Hits@K. Ranks are worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core import property_prediction
from evaluation.core.property_prediction import property_metrics, property_questions, property_ranks
from tests._raises_support import whole

# relation scores of heads 0, 1, 2 (4 relations)
SCORES = np.array([[5.0, 3.0, 4.0, 4.0],
                   [1.0, 1.0, 9.0, 0.0],
                   [0.0, 0.0, 0.0, 0.0]])


def scorer(heads: np.ndarray) -> np.ndarray:
    return SCORES[heads]


def test_public_names() -> None:
    assert sorted(property_prediction.__all__) == sorted(["RelationScorer", "property_questions", "property_ranks",
                                                          "property_metrics"])


def test_relation_scorer_alias_and_default_batch() -> None:
    from collections.abc import Callable
    assert property_prediction.RelationScorer == Callable[[np.ndarray], np.ndarray]
    sizes = []

    def counting(heads: np.ndarray) -> np.ndarray:
        sizes.append(len(heads))
        return np.zeros((len(heads), 2))

    heads = np.arange(1500)
    assert property_ranks(counting, heads, np.zeros(1500, int), set()).tolist() == [1.5] * 1500
    assert sizes == [1024, 476]  # batches of 1024 distinct heads by default


def test_questions_with_relations_beyond_train_and_input_forms() -> None:
    train = np.array([(0, 0, 1), (3, 2, 0)])
    test = np.array([(1, 0, 2), (0, 5, 3), (0, 0, 9), (1, 0, 4), (5, 0, 0), (3, 2, 7), (0, 1, 1)])
    # (0, 0) and (3, 2) are in train; (0, 5) must not be taken for (5, 0) (keys h * R + r with R = 6)
    expected = [(0, 1), (0, 5), (1, 0), (5, 0)]
    for train_form in (train, train[:, :2], {(0, 0), (3, 2)}, [(0, 0, 1), (3, 2, 0)]):
        heads, relations = property_questions(train_form, test)
        assert list(zip(heads.tolist(), relations.tolist())) == expected
    heads, relations = property_questions(np.zeros((0, 3)), test[:3])
    assert list(zip(heads.tolist(), relations.tolist())) == [(0, 0), (0, 5), (1, 0)]
    heads, relations = property_questions(train, np.zeros((0, 3)))
    assert heads.shape == (0,) and relations.shape == (0,)
    heads, relations = property_questions(set(), [])
    assert heads.shape == (0,) and relations.shape == (0,)
    for bad in (np.array([(0, 1, 2, 3)]), np.array([0, 1, 2]), np.array([[[0, 1, 2]]])):
        with pytest.raises(ValueError, match=whole("expected (h, r, t) triples or (h, r) pairs")):
            property_questions(bad, test)
        with pytest.raises(ValueError, match=whole("expected (h, r, t) triples or (h, r) pairs")):
            property_ranks(scorer, np.array([0]), np.array([1]), bad)


def test_property_ranks_refusals() -> None:
    cases = [
        (dict(heads=np.array([0, 1]), relations=np.array([0])), "heads and relations must have the same length"),
        (dict(policy="random"), "unknown tie policy 'random'"),
        (dict(score_relations=lambda heads: SCORES[0]), "relation scorer returned shape (4,), expected (1, R)"),
        (dict(score_relations=lambda heads: SCORES), "relation scorer returned shape (3, 4), expected (1, R)"),
        (dict(num_relations=5), "relation scorer returned 4 relations, expected 5"),
        (dict(num_relations=3), "relation scorer returned 4 relations, expected 3"),
        (dict(relations=np.array([4])), "question relation ids must lie in 0..3"),
        (dict(relations=np.array([-1])), "question relation ids must lie in 0..3"),
    ]
    for options, message in cases:
        arguments = dict(score_relations=scorer, heads=np.array([0]), relations=np.array([1]), known=set()) | options
        with pytest.raises(ValueError, match=whole(message)):
            property_ranks(**arguments)
    assert property_ranks(scorer, np.array([0]), np.array([3]), set(), num_relations=4).tolist() == [2.5]


def test_no_question_calls_no_scorer() -> None:
    def never(heads):
        raise AssertionError("scored without a question")

    ranks = property_ranks(never, np.zeros(0, int), np.zeros(0, int), set())
    assert ranks.shape == (0,) and ranks.dtype == np.float64


def test_each_distinct_head_scored_once_in_batches() -> None:
    calls = []

    def recording(heads):
        calls.append(heads.tolist())
        return SCORES[heads].astype(int)  # integer scores are taken as floats

    heads, relations = np.array([2, 0, 2, 1, 0]), np.array([1, 1, 0, 2, 3])
    ranks = property_ranks(recording, heads, relations, set(), batch_size=2)
    assert calls == [[0, 1], [2]]
    # (2, r1) and (2, r0): all four 0: 1 + 3 ties / 2; (0, r1) = 3: 5, 4, 4 above; (1, r2) = 9: first;
    # (0, r3) = 4: 5 above, r2 tied
    assert ranks.tolist() == [2.5, 4.0, 2.5, 1.0, 2.5]
    calls.clear()
    assert property_ranks(recording, heads, relations, set(), batch_size=10).tolist() == ranks.tolist()
    assert calls == [[0, 1, 2]]
    calls.clear()
    assert property_ranks(recording, heads, relations, set(), batch_size=1).tolist() == ranks.tolist()
    assert calls == [[0], [1], [2]]
    assert property_ranks(recording, heads, relations, set(), policy="optimistic").tolist() == [1, 4, 1, 1, 2]
    assert property_ranks(recording, heads, relations, set(), policy="pessimistic").tolist() == [4, 4, 4, 1, 3]


def test_known_pairs_filter_per_head_and_outside_relations_are_ignored() -> None:
    heads, relations = np.array([0, 1, 2]), np.array([1, 3, 0])
    # head 0: r2 known -> 5, 4 above r1: 3; head 1: r2, r0 known -> r1 (1) above r3 (0): 2; head 2: r1, r3 known
    # -> only r2 ties with r0: 1.5. Relation ids 4 and 9 are beyond the scorer's 4 relations: ignored
    known_pairs = [(0, 2), (1, 2), (1, 0), (2, 1), (2, 3), (0, 4), (1, 9), (7, 0)]
    expected = [3.0, 2.0, 1.5]
    for batch_size in (1, 2, 3):
        for known in (known_pairs, set(known_pairs), np.array(known_pairs),
                      np.array([(h, r, 0) for h, r in known_pairs])):
            assert property_ranks(scorer, heads, relations, known, batch_size=batch_size).tolist() == expected


def test_nan_target_and_nan_candidates() -> None:
    scores = np.array([[np.nan, np.nan, 1.0, -np.inf]])
    ranks = property_ranks(lambda heads: scores[heads * 0], np.array([0, 0, 0]), np.array([0, 2, 3]), set())
    # r0 = -inf: r2 above, r1 and r3 tied: 1 + 1 + 2 / 2; r2 first; r3 = -inf: r2 above, r0 and r1 tied
    assert ranks.tolist() == [3.0, 1.0, 3.0]


def test_metrics_default_hits() -> None:
    metrics = property_metrics(np.array([1.0, 2.0, 4.0, 12.0]))
    assert metrics["MR"] == pytest.approx(19 / 4)
    assert metrics["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 1 / 12) / 4)
    assert (metrics["Hits@1"], metrics["Hits@3"], metrics["Hits@10"]) == (0.25, 0.5, 0.75)
    assert set(metrics) >= {"MR", "MRR", "Hits@1", "Hits@3", "Hits@10"} and "Hits@5" not in metrics
