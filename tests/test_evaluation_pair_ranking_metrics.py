"""AP_r@K, P_r@K, MAP@K, P@K, WMAP@K, WP@K on hand-computed rankings (the study's definitions)."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core.pair_ranking import TopPairs, average_precision_at_k, pair_ranking_metrics


def ranking(*pairs: tuple[int, int]) -> TopPairs:
    heads = np.array([h for h, _ in pairs], dtype=np.int64)
    tails = np.array([t for _, t in pairs], dtype=np.int64)
    return TopPairs(heads, tails, np.linspace(1.0, 0.0, len(pairs)))


def test_ap_divides_by_min_of_k_and_relevant() -> None:
    # |T_r| = 3 < K = 5; relevant at ranks 1 and 3: (1/1 + 2/3) / 3
    assert average_precision_at_k(np.array([1, 0, 1, 0, 0]), 3, 5) == pytest.approx(5 / 9)
    # |T_r| = 4 > K = 2; relevant at rank 2 only: (1/2) / 2
    assert average_precision_at_k(np.array([0, 1, 1, 1]), 4, 2) == pytest.approx(1 / 4)
    # all K relevant and |T_r| >= K: perfect
    assert average_precision_at_k(np.array([1, 1, 1]), 10, 3) == pytest.approx(1.0)
    # fewer than K ranked: the missing positions are non-relevant
    assert average_precision_at_k(np.array([1, 1]), 2, 4) == pytest.approx(1.0)
    assert average_precision_at_k(np.array([]), 2, 4) == 0.0


def test_macro_and_weighted_over_relations() -> None:
    k = 5
    top = {
        0: ranking((0, 1), (9, 9), (2, 3), (8, 8), (7, 7)),          # rel 1 0 1 0 0
        1: ranking((5, 5), (1, 1), (6, 6), (6, 5), (2, 2), (3, 3)),  # rel 0 1 0 0 1 | (3, 3) is beyond K
        2: ranking((0, 0), (1, 0)),                                  # only 2 ranked, both relevant
        4: ranking((1, 2)),                                          # no relevant pairs: left out
    }
    relevant = {
        0: {(0, 1), (2, 3), (4, 5)},
        1: {(1, 1), (2, 2), (3, 3), (4, 4)},
        2: {(0, 0), (1, 0)},
        3: {(7, 7)},                                                 # never ranked: counts as 0
        5: set(),                                                    # empty: left out
    }
    metrics = pair_ranking_metrics(top, relevant, k)
    ap = {0: (1 + 2 / 3) / 3, 1: (1 / 2 + 2 / 5) / 4, 2: 1.0, 3: 0.0}
    precision = {0: 2 / 5, 1: 2 / 5, 2: 2 / 5, 3: 0.0}
    weight = {0: 3, 1: 4, 2: 2, 3: 1}
    assert set(metrics["per_relation"]) == {0, 1, 2, 3}
    for r in ap:
        assert metrics["per_relation"][r]["AP@5"] == pytest.approx(ap[r])
        assert metrics["per_relation"][r]["P@5"] == pytest.approx(precision[r])
        assert metrics["per_relation"][r]["num_relevant"] == weight[r]
    assert metrics["MAP@5"] == pytest.approx(sum(ap.values()) / 4)
    assert metrics["P@5"] == pytest.approx(0.3)
    assert metrics["WMAP@5"] == pytest.approx(sum(weight[r] * ap[r] for r in ap) / 10)
    assert metrics["WP@5"] == pytest.approx((3 + 4 + 2) * 0.4 / 10)
    assert metrics["missing"] == [3]
    assert metrics["num_relations"] == 4


def test_order_matters_between_tied_scores() -> None:
    # The metrics follow the ranking's order, whatever the scores: tie order is top_pairs' business.
    relevant = {0: {(1, 1)}}
    first = TopPairs(np.array([1, 2]), np.array([1, 2]), np.array([0.5, 0.5]))
    second = TopPairs(np.array([2, 1]), np.array([2, 1]), np.array([0.5, 0.5]))
    assert pair_ranking_metrics({0: first}, relevant, 2)["MAP@2"] == pytest.approx(1.0)
    assert pair_ranking_metrics({0: second}, relevant, 2)["MAP@2"] == pytest.approx(0.5)


def test_no_relevant_relation_gives_nan() -> None:
    metrics = pair_ranking_metrics({0: ranking((0, 0))}, {0: set()}, 3)
    assert np.isnan(metrics["MAP@3"]) and np.isnan(metrics["WP@3"])
    with pytest.raises(ValueError):
        pair_ranking_metrics({}, {}, 0)
