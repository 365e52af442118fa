"""Triple classification: ROC-AUC and PR-AUC (average precision) with ties, hand-computed, against a brute-force
pairwise AUC and a brute-force threshold sweep on random data with ties, and against scikit-learn; the curves."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as sk

from evaluation.core.classification import pr_auc, pr_curve, roc_auc, roc_curve


def pairwise_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of (positive, negative) pairs ordered right, a tie counting 1/2."""
    positives, negatives = scores[labels == 1], scores[labels == 0]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return total / (len(positives) * len(negatives))


def sweep_average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """sum over the distinct scores t, highest first, of (recall gained at t) * precision of {score >= t}."""
    total, previous_recall = 0.0, 0.0
    for threshold in sorted(set(scores.tolist()), reverse=True):
        chosen = scores >= threshold
        true_positives = int(np.sum(labels[chosen] == 1))
        recall = true_positives / int(np.sum(labels == 1))
        total += (recall - previous_recall) * true_positives / int(chosen.sum())
        previous_recall = recall
    return total


def test_hand_computed_without_ties() -> None:
    scores, labels = np.array([0.9, 0.8, 0.7, 0.6]), np.array([1, 0, 1, 0])
    assert roc_auc(scores, labels) == 0.75  # 0.9 beats both negatives, 0.7 only 0.6
    assert pr_auc(scores, labels) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)  # recall 1/2 at P 1, 1 at P 2/3


def test_hand_computed_with_ties() -> None:
    scores, labels = np.array([1.0, 1.0, 0.0]), np.array([1, 0, 0])
    assert roc_auc(scores, labels) == 0.75  # (1/2 + 1) / 2
    assert pr_auc(scores, labels) == 0.5  # the tied block enters at once: recall 1 at precision 1/2
    tied = np.ones(5)
    five = np.array([1, 0, 0, 1, 0])
    assert roc_auc(tied, five) == 0.5 and pr_auc(tied, five) == pytest.approx(2 / 5)


def test_one_class_is_undefined() -> None:
    assert math.isnan(roc_auc(np.array([1.0, 2.0]), np.array([1, 1])))
    assert math.isnan(roc_auc(np.array([1.0, 2.0]), np.array([0, 0])))
    assert math.isnan(pr_auc(np.array([1.0, 2.0]), np.array([0, 0])))
    assert pr_auc(np.array([1.0, 2.0]), np.array([1, 1])) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_random_data_with_ties_match_brute_force_and_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n = int(rng.integers(2, 80))
        scores = rng.integers(0, int(rng.integers(2, 12)), n) * 0.5  # few distinct values: many ties
        labels = rng.integers(0, 2, n)
        if labels.min() == labels.max():
            continue
        assert roc_auc(scores, labels) == pytest.approx(pairwise_auc(scores, labels), abs=1e-12)
        assert pr_auc(scores, labels) == pytest.approx(sweep_average_precision(scores, labels), abs=1e-12)
        assert roc_auc(scores, labels) == pytest.approx(sk.roc_auc_score(labels, scores), abs=1e-12)
        assert pr_auc(scores, labels) == pytest.approx(sk.average_precision_score(labels, scores), abs=1e-12)


def test_curves() -> None:
    scores, labels = np.array([3.0, 2.0, 2.0, 1.0]), np.array([1, 1, 0, 0])
    fpr, tpr = roc_curve(scores, labels)
    assert list(fpr) == [0.0, 0.0, 0.5, 1.0] and list(tpr) == [0.0, 0.5, 1.0, 1.0]  # the tie moves diagonally
    assert np.trapezoid(tpr, fpr) == pytest.approx(roc_auc(scores, labels))
    recall, precision = pr_curve(scores, labels)
    assert list(recall) == [0.0, 0.5, 1.0, 1.0]
    assert precision == pytest.approx([1.0, 1.0, 2 / 3, 0.5])
    assert np.sum(np.diff(recall) * precision[1:]) == pytest.approx(pr_auc(scores, labels))  # steps: its area


def test_curves_match_scikit_learn_on_random_data() -> None:
    rng = np.random.default_rng(11)
    scores, labels = rng.integers(0, 6, 200).astype(float), rng.integers(0, 2, 200)
    fpr, tpr = roc_curve(scores, labels)
    sk_fpr, sk_tpr, _ = sk.roc_curve(labels, scores, drop_intermediate=False)
    assert fpr == pytest.approx(sk_fpr) and tpr == pytest.approx(sk_tpr)
    recall, precision = pr_curve(scores, labels)
    sk_precision, sk_recall, _ = sk.precision_recall_curve(labels, scores)
    assert recall == pytest.approx(sk_recall[::-1]) and precision == pytest.approx(sk_precision[::-1])
