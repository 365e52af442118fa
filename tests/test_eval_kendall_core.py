"""Kendall's tau-b (SPEC 5.5): hand cases with ties, scipy agreement, metric-table comparison."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.core.kendall import (
    compare_metric_tables,
    higher_is_better,
    kendall_tau_b,
    kendall_tau_b_batched,
)

# x = [1, 2, 2, 3], y = [1, 3, 2, 2]; the 6 pairs:
#   (0,1) C  (0,2) C  (0,3) C  (1,2) tied in x  (1,3) D  (2,3) tied in y
# tau-b = (3 - 1) / sqrt((6 - 1) (6 - 1)) = 0.4
TIES_X = [1, 2, 2, 3]
TIES_Y = [1, 3, 2, 2]


def test_tau_b_hand_case_with_ties() -> None:
    assert kendall_tau_b(TIES_X, TIES_Y) == pytest.approx(0.4)
    assert kendall_tau_b_batched(np.array(TIES_X), np.array(TIES_Y)) == pytest.approx(0.4)


def test_tau_b_hand_case_with_unequal_tie_counts() -> None:
    # x = [1, 1, 1, 2], y = [1, 2, 3, 4]: x ties 3 pairs, the other 3 are concordant
    # tau-b = 3 / sqrt((6 - 3) * 6) = 3 / sqrt(18)
    assert kendall_tau_b([1, 1, 1, 2], [1, 2, 3, 4]) == pytest.approx(3 / np.sqrt(18))
    assert kendall_tau_b_batched(np.array([1, 1, 1, 2]), np.array([1, 2, 3, 4])) == pytest.approx(3 / np.sqrt(18))


def test_tau_b_perfect_reversed_and_constant() -> None:
    assert kendall_tau_b([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(kendall_tau_b([1, 2, 3], [5, 5, 5]))
    assert np.isnan(kendall_tau_b_batched(np.array([1, 2, 3]), np.array([5, 5, 5])))


def test_batched_tau_b_matches_scipy_on_many_tied_rankings() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(200, 13)).astype(float)  # heavy ties, 13 systems (78 pairs)
    y = rng.integers(0, 4, size=(200, 13)).astype(float)
    expected = [stats.kendalltau(a, b, variant="b").statistic for a, b in zip(x, y)]
    assert kendall_tau_b_batched(x, y) == pytest.approx(np.array(expected), nan_ok=True)
    # broadcasting one reference ranking against a batch
    expected_ref = [stats.kendalltau(a, y[0], variant="b").statistic for a in x]
    assert kendall_tau_b_batched(x, y[0]) == pytest.approx(np.array(expected_ref), nan_ok=True)


def test_batched_tau_b_tolerance_treats_rounding_noise_as_ties() -> None:
    x = np.array([0.1 + 0.2, 0.3, 0.5])  # 0.30000000000000004 vs 0.3
    y = np.array([1.0, 2.0, 3.0])
    assert kendall_tau_b_batched(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    assert kendall_tau_b_batched(x, y, rtol=1e-10) == pytest.approx(stats.kendalltau([0.3, 0.3, 0.5], y).statistic)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("MR", False), ("mr", False), ("MR_head", False), ("mean_rank", False), ("mean_rank_tail", False),
     ("MRR", True), ("Hits@10", True), ("MRR_head", True), ("probe", True)],
)
def test_higher_is_better(name: str, expected: bool) -> None:
    assert higher_is_better(name) is expected


def test_compare_metric_tables_aligns_systems_and_metrics() -> None:
    sparse = pd.DataFrame(
        {"MRR": [0.30, 0.20, 0.25, 0.10], "MR": [100.0, 300.0, 200.0, 50.0], "only_a": [1.0, 2.0, 3.0, 4.0]},
        index=["TransE", "DistMult", "ComplEx", "extra"],
    )
    completed = pd.DataFrame(
        {"MR": [150.0, 120.0, 400.0], "MRR": [0.40, 0.35, 0.45]},
        index=["ComplEx", "TransE", "DistMult"],
    )
    taus = compare_metric_tables(sparse, completed)
    assert list(taus.index) == ["MRR", "MR"]
    # common systems TransE, DistMult, ComplEx
    # MRR sparse [0.30, 0.20, 0.25] vs completed [0.35, 0.45, 0.40]: order reversed -> -1
    # MR sparse [100, 300, 200] vs completed [120, 400, 150]: same order -> +1 (direction does not matter)
    assert taus["MRR"] == pytest.approx(-1.0)
    assert taus["MR"] == pytest.approx(1.0)
    # negating one metric in both tables leaves tau unchanged
    assert compare_metric_tables(-sparse, -completed)["MRR"] == pytest.approx(-1.0)


def test_compare_metric_tables_from_arrays() -> None:
    a = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    b = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    taus = compare_metric_tables(a, b, metrics=["Hits@1", "MRR"])
    assert taus.to_dict() == pytest.approx({"Hits@1": 1.0, "MRR": -1.0})
    with pytest.raises(ValueError):
        compare_metric_tables(a[:1], b[:1])


def test_tau_b_rejects_vectors_of_different_lengths_or_shapes() -> None:
    with pytest.raises(ValueError) as error:
        kendall_tau_b([1, 2, 3], [1, 2, 3, 4])
    assert str(error.value) == "need two 1-D vectors of equal length, got (3,) and (4,)"
    with pytest.raises(ValueError) as error:
        kendall_tau_b([[1, 2], [3, 4]], [[1, 2], [3, 4]])
    assert str(error.value) == "need two 1-D vectors of equal length, got (2, 2) and (2, 2)"


def test_tau_b_of_two_systems_is_defined_and_of_one_is_nan() -> None:
    # two systems: one pair, concordant -> 1, discordant -> -1
    assert kendall_tau_b([1.0, 2.0], [5.0, 7.0]) == 1.0
    assert kendall_tau_b([1.0, 2.0], [7.0, 5.0]) == -1.0
    assert np.isnan(kendall_tau_b([1.0], [2.0]))
    assert np.isnan(kendall_tau_b([], []))


def test_batched_tolerance_is_relative_to_each_rankings_own_largest_value() -> None:
    # threshold rtol * max|x| = 0.25 * 4 = 1 (exact in binary): a difference of exactly 1 is a tie (<=)
    y = np.array([1.0, 2.0, 3.0])
    # x = [1, 2, 4]: pair (0,1) differs by 1 -> tied; (0,2), (1,2) concordant -> tau-b = 2 / sqrt(2 * 3)
    assert kendall_tau_b_batched(np.array([1.0, 2.0, 4.0]), y, rtol=0.25) == pytest.approx(2 / np.sqrt(6))
    # per row: row 2 is row 1 times 100, its threshold is 100 and the same pair ties
    batch = np.array([[1.0, 2.0, 4.0], [100.0, 200.0, 400.0], [1.0, 3.0, 4.0]])
    # row 3: threshold 1, pair (0,1) differs by 2, (1,2) by 1 (tied) -> tau-b = 2 / sqrt(2 * 3)
    expected = [2 / np.sqrt(6), 2 / np.sqrt(6), 2 / np.sqrt(6)]
    assert kendall_tau_b_batched(batch, y, rtol=0.25) == pytest.approx(expected)
    # without tolerance, all three rows are perfectly concordant
    assert kendall_tau_b_batched(batch, y) == pytest.approx([1.0, 1.0, 1.0])


def test_batched_tau_b_of_two_systems_has_one_untied_pair() -> None:
    # one pair per ranking: +1 when both order it alike, -1 when not, NaN when either ties it
    x = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 1.0], [3.0, 3.0]])
    y = np.array([[5.0, 7.0], [7.0, 5.0], [5.0, 7.0], [4.0, 4.0]])
    assert kendall_tau_b_batched(x, y)[:2].tolist() == [1.0, -1.0]
    assert np.isnan(kendall_tau_b_batched(x, y)[2:]).all()
    assert kendall_tau_b_batched(y[:2], x[:2]).tolist() == [1.0, -1.0]


def test_compare_metric_tables_with_two_common_systems_and_its_errors() -> None:
    a = pd.DataFrame({"MRR": [0.2, 0.3]}, index=["TransE", "ComplEx"])
    b = pd.DataFrame({"MRR": [0.5, 0.4]}, index=["TransE", "ComplEx"])
    taus = compare_metric_tables(a, b)
    assert taus.to_dict() == {"MRR": -1.0}
    assert (taus.name, taus.index.name) == ("tau", "metric")
    with pytest.raises(ValueError) as error:
        compare_metric_tables(a.iloc[:1], b)
    assert str(error.value) == "need at least 2 common systems, got 1"
    with pytest.raises(ValueError) as error:
        compare_metric_tables(np.zeros(3), np.zeros(3))
    assert str(error.value) == "a metric table must be 2-D: systems x metrics"
