"""Triple classification (issue #16), Django-free, numpy only.

A system scores positive and negative triples (higher = more plausible). On validation a decision threshold is
learned per relation (:func:`learn_thresholds`), test triples are predicted positive iff ``score >= threshold``
(:func:`predict`) and scored with accuracy / precision / recall / F1 overall and per group
(:func:`classification_metrics`: relations, relation categories, ...). Threshold-free: ROC-AUC (:func:`roc_auc`)
and PR-AUC as average precision (:func:`pr_auc`), with their curves for figures. :func:`evaluate` runs the whole
protocol, including the "consistent vs inconsistent negatives" split of the study's Table 8
(:func:`consistency_masks`).

Threshold rule (what "maximising validation accuracy" means here, ties included). For one relation's validation
triples with distinct scores ``u_1 < ... < u_m`` the candidate thresholds are, in increasing order:

- ``u_1``: everything positive;
- ``(u_i + u_{i+1}) / 2`` for ``i = 1..m-1``: positive iff ``score >= u_{i+1}`` (the midpoint keeps the same
  margin to both neighbouring validation scores);
- ``nextafter(u_m, +inf)``: everything negative.

Equal scores always fall on the same side of a candidate (a triple's class cannot depend on its position among
ties). The accuracy of every candidate is counted exactly and, **among the candidates of highest accuracy, the
smallest threshold is kept** (the most permissive one: ties between thresholds favour recall). This is CoDEx's
rule (its ``scripts/tc.py`` keeps the smallest maximising validation score) except that a threshold between two
validation scores sits at their midpoint instead of at the upper score. A relation without validation triples
gets NaN in :attr:`Thresholds.per_relation` and uses :attr:`Thresholds.fallback`, learned the same way on all
validation triples together.

Undefined values are NaN, never a silent 0: precision when nothing is predicted positive, recall when there is no
positive, AUCs when one class is missing, every rate of an empty group. F1 is ``2 TP / (2 TP + FP + FN)``
(equal to the harmonic mean of precision and recall wherever both are defined, 0 when TP = 0 < FP + FN).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Thresholds", "learn_thresholds", "predict", "classification_metrics", "roc_auc", "pr_auc", "roc_curve",
    "pr_curve", "consistency_masks", "evaluate", "METRIC_NAMES",
]

METRIC_NAMES = ("accuracy", "precision", "recall", "f1")


@dataclass(frozen=True)
class Thresholds:
    """Decision thresholds learned on validation: predict positive iff ``score >= threshold``."""

    per_relation: np.ndarray  # float64 [num_relations]; NaN where the relation had no validation data
    fallback: float  # learned on all validation triples; used where per_relation is NaN

    def for_relations(self, relations: np.ndarray) -> np.ndarray:
        """The threshold of each triple's relation (the fallback for relations without validation data)."""
        relations = np.asarray(relations, dtype=np.int64).reshape(-1)
        if len(relations) and (relations.min() < 0 or relations.max() >= len(self.per_relation)):
            raise ValueError(f"relation ids must lie in 0..{len(self.per_relation) - 1}")
        chosen = self.per_relation[relations]
        return np.where(np.isnan(chosen), self.fallback, chosen)

    @property
    def learned(self) -> np.ndarray:
        """bool [num_relations]: the relation has its own threshold (had validation triples)."""
        return ~np.isnan(self.per_relation)


def _scores_labels(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels).reshape(-1)
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite numbers (no NaN or infinity)")
    if labels.dtype != bool:
        if len(labels) and not np.all((labels == 0) | (labels == 1)):
            raise ValueError("labels must be 0/1 or booleans")
        labels = labels.astype(bool)
    return scores, labels


def _best_threshold(sorted_scores: np.ndarray, sorted_labels: np.ndarray) -> float:
    """The smallest accuracy-maximising candidate threshold (module docstring) of ascending-sorted scores."""
    n = len(sorted_scores)
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])  # first index of each value
    distinct = sorted_scores[starts]
    positives_before = np.r_[0, np.cumsum(sorted_labels)]  # positives among the first k triples
    cut = np.r_[starts, n]  # candidate j predicts the first cut[j] triples negative, the rest positive
    total_positives = positives_before[-1]
    correct = (cut - positives_before[cut]) + (total_positives - positives_before[cut])
    best = int(np.argmax(correct))  # first maximum = smallest threshold
    if best == 0:
        return float(distinct[0])
    if best == len(distinct):
        return float(np.nextafter(distinct[-1], np.inf))
    lower, upper = distinct[best - 1], distinct[best]
    middle = lower / 2 + upper / 2  # no overflow for huge scores
    return float(middle if lower < middle <= upper else upper)  # adjacent floats: the midpoint rounds to lower


def learn_thresholds(scores: np.ndarray, labels: np.ndarray, relations: np.ndarray, num_relations: int) -> Thresholds:
    """Per-relation thresholds maximising validation accuracy, plus the global fallback (module docstring).

    ``scores`` float [n] (finite), ``labels`` 0/1 or bool [n], ``relations`` int [n] in ``0..num_relations-1``.
    """
    scores, labels = _scores_labels(scores, labels)
    relations = np.asarray(relations, dtype=np.int64).reshape(-1)
    if len(relations) != len(scores):
        raise ValueError(f"{len(scores)} scores but {len(relations)} relations")
    if not len(scores):
        raise ValueError("no validation triples to learn thresholds from")
    if relations.min() < 0 or relations.max() >= num_relations:
        raise ValueError(f"relation ids must lie in 0..{num_relations - 1}")
    per_relation = np.full(num_relations, np.nan)
    order = np.lexsort((scores, relations))
    sorted_relations, sorted_scores, sorted_labels = relations[order], scores[order], labels[order]
    bounds = np.flatnonzero(np.r_[True, sorted_relations[1:] != sorted_relations[:-1], True])
    for start, end in zip(bounds[:-1], bounds[1:]):
        per_relation[sorted_relations[start]] = _best_threshold(sorted_scores[start:end], sorted_labels[start:end])
    overall = np.argsort(scores, kind="stable")
    return Thresholds(per_relation, _best_threshold(scores[overall], labels[overall]))


def predict(thresholds: Thresholds, scores: np.ndarray, relations: np.ndarray) -> np.ndarray:
    """bool [n]: ``score >= threshold of the triple's relation``."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    return scores >= thresholds.for_relations(relations)


def _rates(tp: np.ndarray, fp: np.ndarray, tn: np.ndarray, fn: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, precision, recall, F1 from counts (arrays), NaN where undefined (module docstring)."""
    tp, fp, tn, fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, tn, fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = tp + fp + tn + fn
        return {
            "accuracy": np.where(total > 0, (tp + tn) / total, np.nan),
            "precision": np.where(tp + fp > 0, tp / (tp + fp), np.nan),
            "recall": np.where(tp + fn > 0, tp / (tp + fn), np.nan),
            "f1": np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan),
        }


def classification_metrics(labels: np.ndarray, predicted: np.ndarray, groups: np.ndarray | None = None,
                           num_groups: int | None = None) -> dict:
    """Accuracy, precision, recall, F1 and the confusion counts (``count tp fp tn fn``) over all triples as
    floats / ints; with ``groups`` (int [n] in ``0..num_groups-1``: relation or category ids) also
    ``per_group``: the same names as arrays [num_groups] (rates NaN for a group without triples)."""
    labels = np.asarray(labels).reshape(-1).astype(bool)
    predicted = np.asarray(predicted).reshape(-1).astype(bool)
    if len(labels) != len(predicted):
        raise ValueError(f"{len(labels)} labels but {len(predicted)} predictions")
    cells = {"tp": labels & predicted, "fp": ~labels & predicted, "tn": ~labels & ~predicted,
             "fn": labels & ~predicted}
    counts = {name: int(mask.sum()) for name, mask in cells.items()}
    result: dict = {name: float(value) for name, value in _rates(**counts).items()}
    result.update(count=len(labels), **counts)
    if groups is not None:
        groups = np.asarray(groups, dtype=np.int64).reshape(-1)
        if len(groups) != len(labels):
            raise ValueError(f"{len(labels)} labels but {len(groups)} group ids")
        if num_groups is None:
            num_groups = int(groups.max()) + 1 if len(groups) else 0
        if len(groups) and (groups.min() < 0 or groups.max() >= num_groups):
            raise ValueError(f"group ids must lie in 0..{num_groups - 1}")
        group_counts = {name: np.bincount(groups[mask], minlength=num_groups) for name, mask in cells.items()}
        per_group: dict[str, np.ndarray] = dict(_rates(**group_counts))
        per_group["count"] = np.bincount(groups, minlength=num_groups)
        per_group.update(group_counts)
        result["per_group"] = per_group
    return result


def _tie_blocks_descending(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative (true positives, false positives) at each distinct score, from the highest down: a block
    of equal scores is crossed at once (one threshold)."""
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_labels = scores[order], labels[order]
    ends = np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True])  # last index of each block
    true_positives = np.cumsum(sorted_labels)[ends].astype(np.float64)
    false_positives = (ends + 1) - true_positives
    return true_positives, false_positives


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve = P(score of a random positive > score of a random negative) + 1/2 P(equal):
    Mann-Whitney U with average ranks for ties (the trapezoidal area of :func:`roc_curve`). NaN without both
    classes."""
    scores, labels = _scores_labels(scores, labels)
    positives = int(labels.sum())
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(scores)]
    block_rank = (starts + 1 + ends) / 2.0  # mean of the 1-based ranks starts+1..ends
    ranks = np.empty(len(scores))
    ranks[order] = np.repeat(block_rank, ends - starts)
    u_statistic = ranks[labels].sum() - positives * (positives + 1) / 2.0
    return float(u_statistic / (positives * negatives))


def pr_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Average precision: ``sum_k (R_k - R_{k-1}) P_k`` over the distinct scores from the highest down, where
    ``P_k``, ``R_k`` are the precision and recall of predicting positive every triple scoring at least the k-th
    distinct score (tied triples enter together; no interpolation; scikit-learn's ``average_precision_score``).
    NaN without positives."""
    scores, labels = _scores_labels(scores, labels)
    positives = int(labels.sum())
    if positives == 0:
        return float("nan")
    true_positives, false_positives = _tie_blocks_descending(scores, labels)
    precision = true_positives / (true_positives + false_positives)
    recall_gain = np.diff(np.r_[0.0, true_positives]) / positives
    return float(np.sum(recall_gain * precision))


def roc_curve(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rate, true positive rate) from (0, 0) to (1, 1), one point per distinct score from the
    highest down (ties move diagonally). NaN rates for a missing class."""
    scores, labels = _scores_labels(scores, labels)
    true_positives, false_positives = _tie_blocks_descending(scores, labels)
    positives, negatives = labels.sum(), len(labels) - labels.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        fpr = np.r_[0.0, false_positives] / negatives if negatives else np.full(len(false_positives) + 1, np.nan)
        tpr = np.r_[0.0, true_positives] / positives if positives else np.full(len(true_positives) + 1, np.nan)
    return fpr, tpr


def pr_curve(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(recall, precision), one point per distinct score from the highest down, after a first point
    (0, 1) (scikit-learn's convention); drawn as steps (``drawstyle="steps-pre"``) its area is :func:`pr_auc`.
    Empty arrays without positives."""
    scores, labels = _scores_labels(scores, labels)
    positives = int(labels.sum())
    if positives == 0:
        return np.zeros(0), np.zeros(0)
    true_positives, false_positives = _tie_blocks_descending(scores, labels)
    recall = np.r_[0.0, true_positives / positives]
    precision = np.r_[1.0, true_positives / (true_positives + false_positives)]
    return recall, precision


def consistency_masks(labels: np.ndarray, consistent: np.ndarray) -> dict[str, np.ndarray]:
    """The study's Table 8 split of a test set: ``consistent`` = every positive and the type-consistent
    negatives, ``inconsistent`` = every positive and the other negatives (positives' flags are ignored)."""
    labels = np.asarray(labels).reshape(-1).astype(bool)
    consistent = np.asarray(consistent).reshape(-1).astype(bool)
    if len(labels) != len(consistent):
        raise ValueError(f"{len(labels)} labels but {len(consistent)} consistency flags")
    return {"consistent": labels | consistent, "inconsistent": labels | ~consistent}


def _summary(scores: np.ndarray, labels: np.ndarray, predicted: np.ndarray) -> dict:
    result = classification_metrics(labels, predicted)
    result["roc_auc"] = roc_auc(scores, labels)
    result["pr_auc"] = pr_auc(scores, labels)
    return result


def evaluate(valid_scores: np.ndarray, valid_labels: np.ndarray, valid_relations: np.ndarray,
             test_scores: np.ndarray, test_labels: np.ndarray, test_relations: np.ndarray, num_relations: int, *,
             test_consistent: np.ndarray | None = None, test_groups: np.ndarray | None = None,
             num_groups: int | None = None) -> dict:
    """The whole protocol: thresholds from validation, applied to test.

    Returns ``thresholds`` (:class:`Thresholds`), ``overall`` (:func:`classification_metrics` plus ``roc_auc``
    and ``pr_auc`` of all test triples pooled, and ``roc_auc_macro`` / ``pr_auc_macro``: their mean over the
    relations where they are defined), ``per_relation`` (per-group arrays over relations, plus ``roc_auc`` /
    ``pr_auc`` arrays), with ``test_consistent`` also ``consistent`` / ``inconsistent`` (the metrics and pooled
    AUCs on :func:`consistency_masks`), and with ``test_groups`` (e.g. relation categories) ``per_group``.
    """
    thresholds = learn_thresholds(valid_scores, valid_labels, valid_relations, num_relations)
    scores, labels = _scores_labels(test_scores, test_labels)
    relations = np.asarray(test_relations, dtype=np.int64).reshape(-1)
    predicted = predict(thresholds, scores, relations)
    result: dict = {"thresholds": thresholds, "overall": _summary(scores, labels, predicted)}
    per_relation = classification_metrics(labels, predicted, relations, num_relations)["per_group"]
    per_relation["roc_auc"] = np.full(num_relations, np.nan)
    per_relation["pr_auc"] = np.full(num_relations, np.nan)
    for relation in np.unique(relations):
        mask = relations == relation
        per_relation["roc_auc"][relation] = roc_auc(scores[mask], labels[mask])
        per_relation["pr_auc"][relation] = pr_auc(scores[mask], labels[mask])
    result["per_relation"] = per_relation
    # Pooled AUCs compare scores across relations, which a per-relation threshold never does: also the mean
    # over the relations where the AUC is defined (NaN when none is).
    for name in ("roc_auc", "pr_auc"):
        defined = per_relation[name][~np.isnan(per_relation[name])]
        result["overall"][f"{name}_macro"] = float(defined.mean()) if len(defined) else float("nan")
    if test_consistent is not None:
        for name, mask in consistency_masks(labels, test_consistent).items():
            result[name] = _summary(scores[mask], labels[mask], predicted[mask])
    if test_groups is not None:
        result["per_group"] = classification_metrics(labels, predicted, test_groups, num_groups)["per_group"]
    return result
