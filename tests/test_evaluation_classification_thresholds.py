"""Triple classification: per-relation thresholds (hand-computed, ties, relation absent from validation, brute
force on random data) and the confusion-matrix metrics (hand-computed, scikit-learn on random data)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as sk

from evaluation.core.classification import (
    Thresholds,
    classification_metrics,
    consistency_masks,
    evaluate,
    learn_thresholds,
    predict,
)

# relation 0: clean separation; 1: tied validation scores; 2: only negatives; 3: only a positive; 4: no data
SCORES = [1, 2, 3, 4, 1, 2, 2, 3, 5, 7, 4]
LABELS = [0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1]
RELATIONS = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3]


def test_hand_computed_thresholds() -> None:
    thresholds = learn_thresholds(np.array(SCORES, float), np.array(LABELS), np.array(RELATIONS), 5)
    # relation 0: candidates 1, 1.5, 2.5, 3.5, >4 classify 2, 3, 4, 3, 2 of 4 right -> 2.5
    assert thresholds.per_relation[0] == 2.5
    # relation 1: 1 -> 2 right, 1.5 -> 3, 2.5 -> 3 (the tied 2s stay together), >3 -> 2: tie, the smaller 1.5
    assert thresholds.per_relation[1] == 1.5
    # relation 2 (negatives 5, 7): 5 -> 0, 6 -> 1, just above 7 -> 2 right
    assert thresholds.per_relation[2] == np.nextafter(7.0, np.inf)
    # relation 3 (one positive, 4): everything positive at the lowest score
    assert thresholds.per_relation[3] == 4.0
    assert math.isnan(thresholds.per_relation[4]) and list(thresholds.learned) == [True] * 4 + [False]
    # all 11 sorted: 1- 1- 2- 2+ 2- 3+ 3+ 4+ 4+ 5- 7-; candidates right: 5, 7, 8, 6, 4, 5, 6 -> 2.5
    assert thresholds.fallback == 2.5


def test_absent_relation_uses_the_fallback() -> None:
    thresholds = learn_thresholds(np.array(SCORES, float), np.array(LABELS), np.array(RELATIONS), 5)
    assert list(thresholds.for_relations(np.array([4, 0, 1, 4]))) == [2.5, 2.5, 1.5, 2.5]
    predicted = predict(thresholds, np.array([2.5, 2.4, 1.5, 1.4, 7.0, 7.0000001]), np.array([4, 4, 1, 1, 2, 2]))
    assert list(predicted) == [True, False, True, False, False, True]
    with pytest.raises(ValueError, match="relation ids"):
        thresholds.for_relations(np.array([5]))


def test_midpoint_never_rounds_onto_the_lower_score() -> None:
    lower = 1.0
    upper = np.nextafter(lower, 2.0)  # adjacent floats: their midpoint rounds to one of them
    thresholds = learn_thresholds(np.array([lower, upper]), np.array([0, 1]), np.array([0, 0]), 1)
    assert list(predict(thresholds, np.array([lower, upper]), np.array([0, 0]))) == [False, True]


def test_bad_validation_input() -> None:
    with pytest.raises(ValueError, match="finite"):
        learn_thresholds(np.array([1.0, np.nan]), np.array([0, 1]), np.array([0, 0]), 1)
    with pytest.raises(ValueError, match="0/1"):
        learn_thresholds(np.array([1.0, 2.0]), np.array([0, 2]), np.array([0, 0]), 1)
    with pytest.raises(ValueError, match="no validation"):
        learn_thresholds(np.zeros(0), np.zeros(0), np.zeros(0), 1)
    with pytest.raises(ValueError, match="relation ids"):
        learn_thresholds(np.array([1.0]), np.array([1]), np.array([3]), 2)


def brute_force_predictions(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Predictions of the smallest threshold among the observed scores (and +inf) with the best accuracy."""
    best_accuracy, best = -1.0, None
    for threshold in sorted(set(scores.tolist())) + [math.inf]:
        predicted = scores >= threshold
        accuracy = float(np.mean(predicted == labels))
        if accuracy > best_accuracy:
            best_accuracy, best = accuracy, predicted
    return best


def test_random_relations_reach_the_best_validation_accuracy() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        scores = rng.integers(0, 8, n).astype(float) / 4  # many ties
        labels = rng.integers(0, 2, n).astype(bool)
        relations = rng.integers(0, 4, n)
        thresholds = learn_thresholds(scores, labels, relations, 5)
        predicted = predict(thresholds, scores, relations)
        for relation in range(4):
            mask = relations == relation
            if mask.any():
                expected = brute_force_predictions(scores[mask], labels[mask])
                assert list(predicted[mask]) == list(expected)
            else:
                assert math.isnan(thresholds.per_relation[relation])
        assert math.isnan(thresholds.per_relation[4])
        overall = Thresholds(np.full(1, np.nan), thresholds.fallback)
        assert list(predict(overall, scores, np.zeros(n, int))) == list(brute_force_predictions(scores, labels))


def test_hand_computed_metrics_overall_and_per_group() -> None:
    labels = np.array([1, 1, 0, 0, 1])
    predicted = np.array([1, 0, 1, 0, 1])
    result = classification_metrics(labels, predicted, np.array([0, 0, 1, 1, 2]), 4)
    assert (result["tp"], result["fp"], result["tn"], result["fn"], result["count"]) == (2, 1, 1, 1, 5)
    assert result["accuracy"] == pytest.approx(3 / 5)
    assert result["precision"] == pytest.approx(2 / 3) and result["recall"] == pytest.approx(2 / 3)
    assert result["f1"] == pytest.approx(2 / 3)
    group = result["per_group"]
    assert list(group["count"]) == [2, 2, 1, 0]
    assert group["accuracy"][:3] == pytest.approx([0.5, 0.5, 1.0])
    assert group["precision"][:3] == pytest.approx([1.0, 0.0, 1.0])
    assert group["recall"][0] == 0.5 and math.isnan(group["recall"][1]) and group["recall"][2] == 1.0
    assert group["f1"][:3] == pytest.approx([2 / 3, 0.0, 1.0])
    assert all(math.isnan(group[name][3]) for name in ("accuracy", "precision", "recall", "f1"))


def test_nothing_predicted_positive_has_no_precision() -> None:
    result = classification_metrics(np.array([1, 0]), np.array([0, 0]))
    assert math.isnan(result["precision"]) and result["recall"] == 0.0 and result["f1"] == 0.0


def test_metrics_match_scikit_learn_on_random_data() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        labels = rng.integers(0, 2, 50)
        predicted = rng.integers(0, 2, 50)
        if not labels.any() or not predicted.any():
            continue
        result = classification_metrics(labels, predicted)
        assert result["accuracy"] == pytest.approx(sk.accuracy_score(labels, predicted))
        assert result["precision"] == pytest.approx(sk.precision_score(labels, predicted))
        assert result["recall"] == pytest.approx(sk.recall_score(labels, predicted))
        assert result["f1"] == pytest.approx(sk.f1_score(labels, predicted))


def test_consistency_split_keeps_every_positive() -> None:
    masks = consistency_masks(np.array([1, 1, 0, 0, 0]), np.array([0, 1, 1, 0, 1]))
    assert list(masks["consistent"]) == [True, True, True, False, True]
    assert list(masks["inconsistent"]) == [True, True, False, True, False]


def test_evaluate_applies_validation_thresholds_to_test() -> None:
    result = evaluate(np.array(SCORES, float), np.array(LABELS), np.array(RELATIONS),
                      test_scores=np.array([3.0, 2.0, 1.6, 1.4, 2.6, 2.4]), test_labels=np.array([1, 0, 1, 0, 1, 1]),
                      test_relations=np.array([0, 0, 1, 1, 4, 4]), num_relations=5,
                      test_consistent=np.array([0, 1, 0, 0, 0, 0]))
    # thresholds 2.5 (relation 0), 1.5 (relation 1), fallback 2.5 (relation 4): predicted 1 0 1 0 1 0
    overall = result["overall"]
    assert (overall["tp"], overall["fp"], overall["tn"], overall["fn"]) == (3, 0, 2, 1)
    assert overall["roc_auc"] == pytest.approx(7 / 8)  # positives 3, 1.6, 2.6, 2.4 vs negatives 2.0, 1.4
    per_relation = result["per_relation"]
    assert list(per_relation["count"]) == [2, 2, 0, 0, 2]
    assert per_relation["recall"][4] == 0.5 and math.isnan(per_relation["roc_auc"][4])
    # consistent: the four positives and the negative 2.0; inconsistent: the positives and 1.4
    assert result["consistent"]["count"] == 5 and result["consistent"]["tn"] == 1
    assert result["inconsistent"]["roc_auc"] == 1.0


def test_macro_aucs_average_the_relations_where_they_are_defined() -> None:
    # relation 0: positives 2, 3 vs negatives 1, 4 -> pairs right 2 of 4 = 1/2; AP: 4- 3+ 2+ 1- -> 1/2 * 1/2 +
    # 1/2 * 2/3. relation 1: one positive above one negative -> 1, AP 1. relation 2: positives only: undefined AUC.
    scores = np.array([2.0, 3.0, 1.0, 4.0, 9.0, 0.0, 5.0])
    labels = np.array([1, 1, 0, 0, 1, 0, 1])
    relations = np.array([0, 0, 0, 0, 1, 1, 2])
    result = evaluate(scores, labels, relations, scores, labels, relations, 3)
    assert result["overall"]["roc_auc_macro"] == pytest.approx((0.5 + 1.0) / 2)
    assert result["overall"]["pr_auc_macro"] == pytest.approx((0.25 + 1 / 3 + 1.0 + 1.0) / 3)
    # pooled: positives 2, 3, 9, 5 vs negatives 1, 4, 0: 2 and 3 beat two each, 9 and 5 all three -> 10 of 12
    assert result["overall"]["roc_auc"] == pytest.approx(10 / 12)
