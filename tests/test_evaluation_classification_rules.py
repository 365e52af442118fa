"""Triple classification (evaluation.core.classification), the rules the other classification tests leave open
(issue 19, mutation testing): every refusal's message whole, the edges of the threshold rule (huge and adjacent
scores, the fallback), groups without num_groups, a missing class in the curves, the macro AUCs when no relation
has one, the per-group and consistency results of evaluate. Expected values are computed by hand."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from evaluation.core import classification
from evaluation.core.classification import (
    METRIC_NAMES,
    Thresholds,
    classification_metrics,
    consistency_masks,
    evaluate,
    learn_thresholds,
    pr_auc,
    pr_curve,
    predict,
    roc_auc,
    roc_curve,
)
from tests._raises_support import whole


def test_public_names() -> None:
    assert METRIC_NAMES == ("accuracy", "precision", "recall", "f1")
    assert sorted(classification.__all__) == sorted([
        "Thresholds", "learn_thresholds", "predict", "classification_metrics", "roc_auc", "pr_auc", "roc_curve",
        "pr_curve", "consistency_masks", "evaluate", "METRIC_NAMES"])


def test_thresholds_for_relations_and_learned() -> None:
    thresholds = Thresholds(np.array([1.5, np.nan, -2.0]), 0.25)
    assert list(thresholds.for_relations(np.array([[2, 1], [0, 1]]))) == [-2.0, 0.25, 1.5, 0.25]
    assert thresholds.for_relations(np.zeros(0, dtype=int)).shape == (0,)
    assert list(thresholds.learned) == [True, False, True]
    for bad in ([3], [-1], [0, 3]):
        with pytest.raises(ValueError, match=whole("relation ids must lie in 0..2")):
            thresholds.for_relations(np.array(bad))
    with pytest.raises(AttributeError):
        thresholds.fallback = 1.0  # frozen


def test_threshold_at_the_midpoint_of_huge_scores() -> None:
    # (lower + upper) / 2 would overflow to inf; the midpoint is 1.35e308
    thresholds = learn_thresholds(np.array([1e308, 1e308, 1.7e308]), np.array([0, 0, 1]), np.zeros(3, int), 1)
    assert thresholds.per_relation[0] == pytest.approx(1.35e308, rel=1e-15) and 1e308 < thresholds.fallback < 1.7e308
    thresholds = learn_thresholds(np.array([-4.0, 6.0]), np.array([0, 1]), np.zeros(2, int), 1)
    assert thresholds.per_relation[0] == 1.0  # (-4 + 6) / 2


def test_threshold_between_adjacent_floats_is_the_upper_score() -> None:
    for lower in (1.0, 3.0, -1.0, 0.1, 1e300):
        upper = np.nextafter(lower, np.inf)
        thresholds = learn_thresholds(np.array([upper, lower]), np.array([1, 0]), np.array([0, 0]), 1)
        assert thresholds.per_relation[0] == upper and thresholds.fallback == upper


def test_threshold_candidates_at_both_ends() -> None:
    # all positives: the lowest score (everything positive); all negatives: just above the highest
    thresholds = learn_thresholds(np.array([4.0, 3.0, 5.0, 2.0, 1.0]), np.array([1, 1, 1, 0, 0]),
                                  np.array([0, 0, 0, 1, 1]), 2)
    assert thresholds.per_relation[0] == 3.0
    assert thresholds.per_relation[1] == np.nextafter(2.0, np.inf)
    # pooled: 1- 2- 3+ 4+ 5+: positive iff >= 3, the midpoint of 2 and 3 -> 2.5
    assert thresholds.fallback == 2.5
    # positives below the negatives: 1+ 2+ 3+ 4- 5- pooled, everything positive (3 right) beats any cut
    thresholds = learn_thresholds(np.array([3.0, 1.0, 2.0, 5.0, 4.0]), np.array([1, 1, 1, 0, 0]), np.zeros(5, int), 1)
    assert thresholds.per_relation[0] == 1.0 and thresholds.fallback == 1.0
    # three negatives: just above the highest of them
    thresholds = learn_thresholds(np.array([6.0, 2.0, 4.0]), np.array([0, 0, 0]), np.zeros(3, int), 1)
    assert thresholds.per_relation[0] == np.nextafter(6.0, np.inf) and thresholds.fallback == np.nextafter(6.0, np.inf)
    # tied scores stay on one side: 1- 2- 2+ -> positive iff >= 1.5 (2 of 3 right), not a cut between the 2s
    thresholds = learn_thresholds(np.array([2.0, 1.0, 2.0]), np.array([1, 0, 0]), np.zeros(3, int), 1)
    assert thresholds.per_relation[0] == 1.5 and thresholds.fallback == 1.5
    # one value, both classes: 1 right either way, the smaller candidate (everything positive) wins
    thresholds = learn_thresholds(np.array([2.0, 2.0]), np.array([0, 1]), np.array([0, 0]), 1)
    assert thresholds.per_relation[0] == 2.0
    # a late maximum: 1- 2- 3- 4+ -> 3.5 right on all four
    thresholds = learn_thresholds(np.array([4.0, 2.0, 1.0, 3.0]), np.array([1, 0, 0, 0]), np.zeros(4, int), 1)
    assert thresholds.per_relation[0] == 3.5


def test_thresholds_per_relation_with_unsorted_interleaved_relations() -> None:
    scores = np.array([10.0, 1.0, 20.0, 2.0, 30.0, 3.0])
    labels = np.array([0, 0, 1, 1, 1, 1])
    relations = np.array([2, 0, 2, 0, 2, 0])
    thresholds = learn_thresholds(scores, labels, relations, 4)
    # relation 0: 1- 2+ 3+ -> 1.5; relation 2: 10- 20+ 30+ -> 15; relations 1 and 3 absent
    assert thresholds.per_relation[0] == 1.5 and thresholds.per_relation[2] == 15.0
    assert math.isnan(thresholds.per_relation[1]) and math.isnan(thresholds.per_relation[3])
    # pooled: 1- 2+ 3+ 10- 20+ 30+: candidates right 4, 5, 4, 3, 4, 3, 2 -> 1.5
    assert thresholds.fallback == 1.5
    assert list(predict(thresholds, np.array([1.5, 1.4, 15.0, 14.9, 1.5, 1.4]), np.array([0, 0, 2, 2, 3, 1]))) == [
        True, False, True, False, True, False]


def test_learn_thresholds_refusals() -> None:
    with pytest.raises(ValueError, match=whole("2 scores but 3 labels")):
        learn_thresholds(np.array([1.0, 2.0]), np.array([0, 1, 1]), np.array([0, 0]), 1)
    with pytest.raises(ValueError, match=whole("2 scores but 1 relations")):
        learn_thresholds(np.array([1.0, 2.0]), np.array([0, 1]), np.array([0]), 1)
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match=whole("scores must be finite numbers (no NaN or infinity)")):
            learn_thresholds(np.array([1.0, bad]), np.array([0, 1]), np.array([0, 0]), 1)
    for labels in ([0, 2], [-1, 1], [0.5, 1.0]):
        with pytest.raises(ValueError, match=whole("labels must be 0/1 or booleans")):
            learn_thresholds(np.array([1.0, 2.0]), np.array(labels), np.array([0, 0]), 1)
    with pytest.raises(ValueError, match=whole("no validation triples to learn thresholds from")):
        learn_thresholds(np.zeros(0), np.zeros(0), np.zeros(0), 1)
    for relations in ([0, 2], [-1, 0]):
        with pytest.raises(ValueError, match=whole("relation ids must lie in 0..1")):
            learn_thresholds(np.array([1.0, 2.0]), np.array([0, 1]), np.array(relations), 2)


def test_labels_as_floats_and_booleans() -> None:
    for labels in (np.array([0.0, 1.0, 1.0]), np.array([False, True, True]), np.array([0, 1, 1])):
        thresholds = learn_thresholds(np.array([1.0, 2.0, 3.0]), labels, np.zeros(3, int), 1)
        assert thresholds.per_relation[0] == 1.5
        assert roc_auc(np.array([1.0, 2.0, 3.0]), labels) == 1.0
    assert math.isnan(roc_auc(np.zeros(0), np.zeros(0)))


def test_one_class_auc_is_nan_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0 computed on the way
        for labels in ([1, 1, 1], [0, 0, 0]):
            assert math.isnan(roc_auc(np.array([3.0, 1.0, 2.0]), np.array(labels)))


def test_metrics_refusals_and_groups_without_num_groups() -> None:
    with pytest.raises(ValueError, match=whole("2 labels but 3 predictions")):
        classification_metrics(np.array([1, 0]), np.array([1, 0, 1]))
    with pytest.raises(ValueError, match=whole("2 labels but 1 group ids")):
        classification_metrics(np.array([1, 0]), np.array([1, 0]), np.array([0]))
    for groups, num_groups, message in (([0, 3], 3, "0..2"), ([-1, 0], 3, "0..2"), ([0, 1], 1, "0..0")):
        with pytest.raises(ValueError, match=whole(f"group ids must lie in {message}")):
            classification_metrics(np.array([1, 0]), np.array([1, 0]), np.array(groups), num_groups)
    result = classification_metrics(np.array([1, 0, 1]), np.array([1, 1, 0]), np.array([2, 0, 2]))
    group = result["per_group"]
    # num_groups = largest id + 1 = 3: group 0 (one false positive), 1 (empty), 2 (one tp, one fn)
    assert list(group["count"]) == [1, 0, 2]
    assert list(group["tp"]) == [0, 0, 1] and list(group["fp"]) == [1, 0, 0]
    assert list(group["tn"]) == [0, 0, 0] and list(group["fn"]) == [0, 0, 1]
    assert group["accuracy"][0] == 0.0 and math.isnan(group["accuracy"][1]) and group["accuracy"][2] == 0.5
    assert group["precision"][0] == 0.0 and group["precision"][2] == 1.0 and math.isnan(group["recall"][0])
    assert group["f1"][0] == 0.0 and group["f1"][2] == pytest.approx(2 / 3)
    assert (result["tp"], result["fp"], result["tn"], result["fn"], result["count"]) == (1, 1, 0, 1, 3)
    # tp 1, fp 1, fn 1: accuracy 1 / 3, precision 1 / 2, recall 1 / 2, F1 2 / (2 + 1 + 1)
    assert [result[name] for name in METRIC_NAMES] == pytest.approx([1 / 3, 0.5, 0.5, 0.5])
    # tp 2, fp 1, tn 1, fn 3: accuracy 3 / 7, precision 2 / 3, recall 2 / 5, F1 4 / (4 + 1 + 3)
    result = classification_metrics(np.array([1, 1, 1, 1, 1, 0, 0]), np.array([1, 1, 0, 0, 0, 1, 0]))
    assert [result[name] for name in METRIC_NAMES] == pytest.approx([3 / 7, 2 / 3, 2 / 5, 1 / 2])
    empty = classification_metrics(np.zeros(0), np.zeros(0), np.zeros(0, int))
    assert empty["count"] == 0 and all(len(empty["per_group"][name]) == 0 for name in ("count", "tp", "f1"))
    assert all(math.isnan(empty[name]) for name in METRIC_NAMES)
    assert "per_group" not in classification_metrics(np.array([1]), np.array([1]))


def test_rates_at_one_triple() -> None:
    # a single triple of each kind: every defined rate is 0 or 1, the undefined ones NaN
    cases = {(1, 1): (1.0, 1.0, 1.0, 1.0), (0, 0): (1.0, math.nan, math.nan, math.nan),
             (0, 1): (0.0, 0.0, math.nan, 0.0), (1, 0): (0.0, math.nan, 0.0, 0.0)}
    for (label, predicted), expected in cases.items():
        result = classification_metrics(np.array([label]), np.array([predicted]))
        got = tuple(result[name] for name in METRIC_NAMES)
        assert all((math.isnan(e) and math.isnan(g)) or e == g for e, g in zip(expected, got)), (label, predicted)
        assert isinstance(result["accuracy"], float) and isinstance(result["tp"], int)


def test_curves_with_a_missing_class() -> None:
    fpr, tpr = roc_curve(np.array([2.0, 1.0, 1.0]), np.array([1, 1, 1]))
    assert len(fpr) == 3 and np.all(np.isnan(fpr)) and list(tpr) == [0.0, 1 / 3, 1.0]
    fpr, tpr = roc_curve(np.array([2.0, 1.0]), np.array([0, 0]))
    assert list(fpr) == [0.0, 0.5, 1.0] and len(tpr) == 3 and np.all(np.isnan(tpr))
    recall, precision = pr_curve(np.array([2.0, 1.0]), np.array([0, 0]))
    assert recall.shape == (0,) and precision.shape == (0,)
    assert math.isnan(pr_auc(np.array([2.0, 1.0]), np.array([0, 0])))
    recall, precision = pr_curve(np.array([2.0, 1.0, 1.0]), np.array([1, 1, 1]))
    assert list(recall) == [0.0, 1 / 3, 1.0] and list(precision) == [1.0, 1.0, 1.0]


def test_aucs_by_hand() -> None:
    # sorted 1- 2+ 2- 3+ 4-: ranks 1, 2.5, 2.5, 4, 5; positives' rank sum 6.5 - 2*3/2 = 3.5 of 6 pairs
    scores, labels = np.array([2.0, 4.0, 1.0, 2.0, 3.0]), np.array([1, 0, 0, 0, 1])
    assert roc_auc(scores, labels) == pytest.approx(3.5 / 6)
    # from the top: 4- (P 0), 3+ (R 1/2, P 1/2), the 2s (R 1, P 2/4), 1-: 1/2 * 1/2 + 1/2 * 1/2
    assert pr_auc(scores, labels) == pytest.approx(0.5)
    fpr, tpr = roc_curve(scores, labels)
    assert fpr == pytest.approx([0, 1 / 3, 1 / 3, 2 / 3, 1]) and tpr == pytest.approx([0, 0, 0.5, 1, 1])
    recall, precision = pr_curve(scores, labels)
    assert recall == pytest.approx([0, 0, 0.5, 1, 1]) and precision == pytest.approx([1, 0, 0.5, 0.5, 0.4])


def test_consistency_masks_refusal() -> None:
    with pytest.raises(ValueError, match=whole("3 labels but 2 consistency flags")):
        consistency_masks(np.array([1, 0, 0]), np.array([1, 0]))
    masks = consistency_masks(np.array([[1, 0], [0, 0]]), np.array([[0, 1], [0, 0]]))
    assert list(masks["consistent"]) == [True, True, False, False]
    assert list(masks["inconsistent"]) == [True, False, True, True]


def test_evaluate_groups_consistency_and_undefined_macro_aucs() -> None:
    # validation: relation 0 positive iff >= 1.5 (1- 2+), relation 1 only a positive at 5 -> 5; fallback: 1- 2+ 5+
    valid = dict(valid_scores=np.array([1.0, 2.0, 5.0]), valid_labels=np.array([0, 1, 1]),
                 valid_relations=np.array([0, 0, 1]))
    test_scores = np.array([1.6, 1.4, 4.0, 6.0, 1.0])
    test_labels = np.array([1, 1, 0, 1, 0])
    test_relations = np.array([0, 0, 1, 1, 2])  # relation 2 has no validation triple: fallback 1.5
    result = evaluate(**valid, test_scores=test_scores, test_labels=test_labels, test_relations=test_relations,
                      num_relations=3, test_consistent=np.array([0, 0, 1, 0, 0]), test_groups=np.array([1, 1, 0, 0, 1]),
                      num_groups=3)
    assert result["thresholds"].per_relation[0] == 1.5 and result["thresholds"].per_relation[1] == 5.0
    assert result["thresholds"].fallback == 1.5
    # predicted: 1 0 0 1 0
    overall = result["overall"]
    assert (overall["tp"], overall["fp"], overall["tn"], overall["fn"], overall["count"]) == (2, 0, 2, 1, 5)
    # pooled: positives 1.6, 1.4, 6 vs negatives 4, 1: 1.6 and 1.4 beat 1, 6 beats both -> 4 of 6
    assert overall["roc_auc"] == pytest.approx(4 / 6)
    # from the top: 6+ (R 1/3, P 1), 4-, 1.6+ (R 2/3, P 2/3), 1.4+ (R 1, P 3/4), 1-
    assert overall["pr_auc"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    per_relation = result["per_relation"]
    assert list(per_relation["count"]) == [2, 2, 1]
    assert math.isnan(per_relation["roc_auc"][0]) and per_relation["pr_auc"][0] == 1.0  # positives only
    assert per_relation["roc_auc"][1] == 1.0 and per_relation["pr_auc"][1] == 1.0
    assert math.isnan(per_relation["roc_auc"][2]) and math.isnan(per_relation["pr_auc"][2])  # a negative only
    assert overall["roc_auc_macro"] == 1.0 and overall["pr_auc_macro"] == 1.0
    group = result["per_group"]
    assert list(group["count"]) == [2, 3, 0] and list(group["tp"]) == [1, 1, 0] and list(group["fn"]) == [0, 1, 0]
    # consistent: the 3 positives and the negative 4.0; inconsistent: the 3 positives and the negative 1.0
    consistent, inconsistent = result["consistent"], result["inconsistent"]
    assert (consistent["count"], consistent["tn"], consistent["fn"]) == (4, 1, 1)
    assert consistent["roc_auc"] == pytest.approx(1 / 3) and inconsistent["roc_auc"] == 1.0
    assert consistent["pr_auc"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3) and inconsistent["pr_auc"] == 1.0
    # no relation with both classes and no positive anywhere: both macro AUCs are NaN
    result = evaluate(**valid, test_scores=np.array([1.0, 2.0]), test_labels=np.array([0, 0]),
                      test_relations=np.array([0, 1]), num_relations=3)
    assert math.isnan(result["overall"]["roc_auc_macro"]) and math.isnan(result["overall"]["pr_auc_macro"])
    assert "consistent" not in result and "per_group" not in result
