"""The agreement statistics of annotation/lib/agreement.py, Django-free, against independent references:
scikit-learn's Cohen's kappa, a brute-force Krippendorff's alpha over ordered pairs of pairable values, the
Wilson interval as the roots of its quadratic, and bootstrap percentiles on statistics whose resampled values
are known in advance (issue 19: written for the mutants the older tests let survive)."""
from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.lib.agreement import (
    TABLE_STATISTICS,
    Interval,
    Table,
    bootstrap,
    cohen_kappa,
    gwet_ac1,
    krippendorff_alpha_nominal,
    pairs_to_units,
    percent_agreement,
    table_from_pairs,
    table_intervals,
    table_statistics,
    wilson_interval,
    yes_no_statistics,
)


def alpha_brute_force(units) -> float:
    """alpha = 1 - D_o / D_e over the ordered pairs of values: within a unit (weight 1 / (m - 1)) and across all
    pairable values (Krippendorff 2011, nominal)."""
    pairable = [[v for v in unit if v is not None] for unit in units]
    pairable = [values for values in pairable if len(values) >= 2]
    values = [v for unit in pairable for v in unit]
    n = len(values)
    observed = sum(sum(a != b for a, b in itertools.permutations(unit, 2)) / (len(unit) - 1) for unit in pairable)
    expected = sum(a != b for a, b in itertools.permutations(values, 2))
    return 1 - (n - 1) * observed / expected


def random_pairs(rng: random.Random, labels: str, size: int) -> list[tuple[str, str]]:
    return [(rng.choice(labels), rng.choice(labels)) for _ in range(size)]


def test_percent_agreement_counts_equal_pairs_over_all_pairs():
    assert percent_agreement([("a", "a"), ("a", "b"), ("b", "b"), ("c", "a")]) == 0.5
    assert math.isnan(percent_agreement([]))


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_matches_scikit_learn(seed):
    rng = random.Random(seed)
    pairs = random_pairs(rng, "YNC"[: 2 + seed % 2], 5 + seed * 7)
    first, second = zip(*pairs)
    assert cohen_kappa(pairs) == pytest.approx(cohen_kappa_score(first, second))


def test_cohen_kappa_with_only_one_rater_constant_is_zero_not_nan():
    # p_o = 1/4, p_e = (4 * 1) / 16 = 1/4 -> 0; sklearn agrees
    pairs = [("Y", "Y"), ("Y", "N"), ("Y", "N"), ("Y", "N")]
    assert cohen_kappa(pairs) == 0.0
    assert math.isnan(cohen_kappa([("N", "N")] * 4))


def test_gwet_ac1_three_observed_categories_hand_computed():
    # counts over both raters: a 3, b 2, c 1 (2n = 6); pi = 1/2, 1/3, 1/6; q = 3
    # p_e = (1/2*1/2 + 1/3*2/3 + 1/6*5/6) / 2 = (9/36 + 8/36 + 5/36) / 2 = 11/36; p_o = 2/3
    pairs = [("a", "a"), ("b", "b"), ("a", "c")]
    pe = 11 / 36
    assert gwet_ac1(pairs) == pytest.approx((2 / 3 - pe) / (1 - pe))
    # categories given: a fourth unobserved one makes q = 4 (p_e = 22/36 / 3)
    pe4 = 22 / 36 / 3
    assert gwet_ac1(pairs, ("a", "b", "c", "d")) == pytest.approx((2 / 3 - pe4) / (1 - pe4))


def test_gwet_ac1_undefined_cases():
    assert math.isnan(gwet_ac1([]))
    assert math.isnan(gwet_ac1([("Y", "Y")] * 3))  # one category observed: q = 1
    # the same data with both categories given is defined: pi_Y = 1, p_e = 0 -> AC1 = p_o = 1
    assert gwet_ac1([("Y", "Y")] * 3, ("Y", "N")) == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_alpha_matches_brute_force_on_random_units(seed):
    rng = random.Random(seed)
    units = [[rng.choice(["a", "b", "c", None]) for _ in range(rng.randint(1, 5))] for _ in range(12)]
    units.append(["a", "b"])  # at least two categories among pairable values
    assert krippendorff_alpha_nominal(units) == pytest.approx(alpha_brute_force(units))


def test_alpha_two_values_hand_computed_and_undefined_cases():
    # one unit Y/N and one Y/Y: o_YN = o_NY = 1, o_YY = 2; n_Y = 3, n_N = 1, n = 4
    # alpha = 1 - 3 * 2 / (2 * 3 * 1) = 0
    assert krippendorff_alpha_nominal([["Y", "N"], ["Y", "Y"]]) == 0.0
    # the smallest defined case: two pairable values, one unit Y/N: D_o = D_e, alpha = 0
    assert krippendorff_alpha_nominal([["Y", "N"], ["N"]]) == 0.0 == alpha_brute_force([["Y", "N"]])
    assert math.isnan(krippendorff_alpha_nominal([]))
    assert math.isnan(krippendorff_alpha_nominal([["Y", None], [None, "N"]]))  # nothing pairable
    assert math.isnan(krippendorff_alpha_nominal([["Y", "Y"]]))  # one category


def test_yes_no_statistics_with_cant_tell_hand_computed():
    pairs = [("Y", "Y"), ("Y", "N"), ("N", "N"), ("C", "C"), ("Y", "C"), ("N", "N")]
    stats = yes_no_statistics(pairs)
    assert (stats.items, stats.cant_tell) == (6, 2)
    assert stats.percent == pytest.approx(3 / 6)  # C/C is not an agreement
    yes_no = [("Y", "Y"), ("Y", "N"), ("N", "N"), ("N", "N")]
    assert stats.kappa == pytest.approx(cohen_kappa(yes_no))
    # AC1 over Y/N with q = 2: pi_Y = 3/8, p_e = 2 * 3/8 * 5/8 = 30/64, p_o = 3/4
    assert stats.ac1 == pytest.approx((3 / 4 - 30 / 64) / (1 - 30 / 64))
    units = [[None if v == "C" else v for v in pair] for pair in pairs]
    assert stats.alpha == pytest.approx(alpha_brute_force(units))


def test_yes_no_statistics_units_given_and_empty():
    units = [["Y", "Y", "N"], ["N", "N", "C"], ["Y", "Y"]]
    stats = yes_no_statistics([("Y", "Y"), ("N", "N")], units)
    assert stats.alpha == pytest.approx(alpha_brute_force([["Y", "Y", "N"], ["N", "N", None], ["Y", "Y"]]))
    assert stats.percent == 1.0
    empty = yes_no_statistics([])
    assert (empty.items, empty.cant_tell) == (0, 0)
    assert all(math.isnan(x) for x in (empty.percent, empty.kappa, empty.ac1, empty.alpha))
    other = yes_no_statistics([("Y", "?"), ("?", "?")], cant_tell="?")
    assert (other.cant_tell, other.percent) == (2, 0.0)


def test_pairs_to_units_and_table_from_pairs():
    assert pairs_to_units([("Y", "N"), ("N", "N")]) == [["Y", "N"], ["N", "N"]]
    pairs = [("Y", "Y")] * 3 + [("Y", "N")] * 2 + [("N", "Y")] + [("N", "N")] * 4 + [("x", "N")]
    assert table_from_pairs(pairs) == Table(3, 2, 1, 5)
    assert table_from_pairs(pairs, yes="N") == Table(4, 1, 3, 3)
    assert Table(3, 2, 1, 5).n == 11


def counting_statistic():
    """A statistic that ignores its units and returns 0, 1, 2, ...: the sorted resampled values are 1..samples."""
    calls = itertools.count()
    return lambda units: float(next(calls))


@pytest.mark.parametrize(("samples", "level", "low", "high"), [
    (40, 0.95, 2.0, 39.0),     # tail 0.025: values[floor(1)] = 2, values[ceil(39) - 1 = 38] = 39
    (100, 0.75, 13.0, 88.0),   # tail 0.125: values[floor(12.5) = 12] = 13, values[ceil(87.5) - 1 = 87] = 88
    (10, 0.5, 3.0, 8.0),       # tail 0.25: values[floor(2.5) = 2] = 3, values[ceil(7.5) - 1 = 7] = 8
    (3, 0.0, 2.0, 2.0),        # tail 0.5: values[1] = 2, values[ceil(1.5) - 1 = 1] = 2
    (2, 0.0, 2.0, 1.0),        # tail 0.5: values[floor(1) = 1] = 2, values[ceil(1) - 1 = 0] = 1 (crossed)
])
def test_bootstrap_percentile_positions(samples, level, low, high):
    interval = bootstrap(counting_statistic(), ["u", "v"], samples=samples, level=level)
    assert interval == Interval(0.0, low, high)


def test_bootstrap_level_one_takes_the_extremes():
    assert bootstrap(counting_statistic(), ["u"], samples=5, level=1.0) == Interval(0.0, 1.0, 5.0)


def test_bootstrap_resamples_units_with_replacement_and_is_seeded():
    seen = []
    bootstrap(lambda units: seen.append(list(units)) or 0.0, [1, 2, 3, 4, 5], samples=50, seed=3)
    assert seen[0] == [1, 2, 3, 4, 5]  # the estimate on the units themselves
    assert len(seen) == 51 and all(len(draw) == 5 and set(draw) <= {1, 2, 3, 4, 5} for draw in seen)
    assert any(len(set(draw)) < 5 for draw in seen[1:])  # with replacement
    mean = lambda units: sum(units) / len(units)  # noqa: E731
    data = [0, 1, 1, 5, 9, 2]
    assert bootstrap(mean, data, samples=60, seed=7) == bootstrap(mean, data, samples=60, seed=7)
    assert bootstrap(mean, data, samples=60, seed=7) != bootstrap(mean, data, samples=60, seed=8)
    expected_rng = random.Random(7)
    draws = sorted(mean([data[expected_rng.randrange(6)] for _ in data]) for _ in range(60))
    assert bootstrap(mean, data, samples=60, seed=7) == Interval(mean(data), draws[1], draws[58])


def test_bootstrap_drops_nan_resamples_and_handles_no_units():
    values = iter([0.5, math.nan, 0.2, math.nan, 0.9])
    assert bootstrap(lambda units: next(values), ["u"], samples=4) == Interval(0.5, 0.2, 0.9)
    only_nan = bootstrap(lambda units: 0.3 if len(units) == 2 and units[0] != units[1] else math.nan,
                         ["a", "b"], samples=0)
    assert (only_nan.estimate, math.isnan(only_nan.low), math.isnan(only_nan.high)) == (0.3, True, True)
    empty = bootstrap(lambda units: 0.0, [])
    assert all(math.isnan(x) for x in (empty.estimate, empty.low, empty.high))


def wilson_by_quadratic(successes: int, total: int, z: float) -> tuple[float, float]:
    """The p with (p - p_hat)^2 = z^2 p (1 - p) / n: (1 + z^2/n) p^2 - (2 p_hat + z^2/n) p + p_hat^2 = 0."""
    p_hat, k = successes / total, z * z / total
    roots = np.sort(np.roots([1 + k, -(2 * p_hat + k), p_hat * p_hat]).real)
    return float(roots[0]), float(roots[1])


@pytest.mark.parametrize(("successes", "total", "z"), [(9, 10, 1.959964), (3, 7, 1.959964), (1, 4, 1.0)])
def test_wilson_interval_is_the_roots_of_its_quadratic(successes, total, z):
    low, high = wilson_by_quadratic(successes, total, z)
    interval = wilson_interval(successes, total, z)
    assert interval.estimate == successes / total
    assert (interval.low, interval.high) == (pytest.approx(low), pytest.approx(high))


def test_wilson_interval_default_z_and_bounds():
    low, high = wilson_by_quadratic(9, 10, 1.959964)
    assert (wilson_interval(9, 10).low, wilson_interval(9, 10).high) == (pytest.approx(low), pytest.approx(high))
    none_right = wilson_interval(0, 5)
    assert (none_right.estimate, none_right.low) == (0.0, 0.0) and 0 < none_right.high < 1
    all_right = wilson_interval(5, 5)
    assert (all_right.estimate, all_right.high) == (1.0, 1.0) and 0 < all_right.low < 1
    assert all(math.isnan(x) for x in (lambda i: (i.estimate, i.low, i.high))(wilson_interval(0, 0)))


def pairs_of(yy: int, yn: int, ny: int, nn: int):
    return [("Y", "Y")] * yy + [("Y", "N")] * yn + [("N", "Y")] * ny + [("N", "N")] * nn


@pytest.mark.parametrize("cells", [(20, 5, 10, 15), (0, 3, 4, 9), (7, 0, 0, 2), (1, 2, 3, 0), (0, 0, 0, 6), (0, 1, 0, 0),
                                   (0, 5, 0, 0)])
def test_table_statistics_scalar_equal_the_pairwise_definitions(cells):
    stats = table_statistics(*cells)
    pairs = pairs_of(*cells)
    expected = {"percent": percent_agreement(pairs), "kappa": cohen_kappa(pairs),
                "ac1": gwet_ac1(pairs, ("Y", "N")), "alpha": krippendorff_alpha_nominal(pairs_to_units(pairs))}
    assert set(stats) == set(TABLE_STATISTICS)
    for name in TABLE_STATISTICS:
        assert type(stats[name]) is float
        assert stats[name] == pytest.approx(expected[name], nan_ok=True)


def test_table_statistics_arrays_and_the_empty_table():
    cells = np.array([[20, 5, 10, 15], [0, 0, 0, 0], [0, 3, 4, 9]])
    stats = table_statistics(cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    for name in TABLE_STATISTICS:
        assert isinstance(stats[name], np.ndarray) and stats[name].shape == (3,)
        for row, value in zip(cells, stats[name]):
            assert value == pytest.approx(table_statistics(*row)[name], nan_ok=True)
    assert all(math.isnan(v) for v in table_statistics(0, 0, 0, 0).values())


def test_table_intervals_against_the_pairwise_statistics_of_the_same_draws():
    table = Table(12, 3, 5, 10)
    intervals = table_intervals(table, samples=201, level=0.5, seed=4)  # tail 0.25, exact in binary
    counts = np.random.default_rng(4).multinomial(30, np.array([12, 3, 5, 10]) / 30, size=201)
    for name in TABLE_STATISTICS:
        values = sorted(v for v in (table_statistics(*row)[name] for row in counts) if not math.isnan(v))
        expected = Interval(table_statistics(12, 3, 5, 10)[name], values[math.floor(0.25 * len(values))],
                            values[math.ceil(0.75 * len(values)) - 1])
        assert intervals[name] == Interval(pytest.approx(expected.estimate), pytest.approx(expected.low),
                                           pytest.approx(expected.high))
        assert type(intervals[name].low) is float
    assert table_intervals(table, seed=4) != table_intervals(table, seed=5)


def test_table_intervals_level_one_and_undefined_statistics():
    intervals = table_intervals(Table(2, 1, 1, 2), samples=50, level=1.0, seed=0)
    counts = np.random.default_rng(0).multinomial(6, np.array([2, 1, 1, 2]) / 6, size=50)
    percent = sorted(table_statistics(*row)["percent"] for row in counts)
    assert (intervals["percent"].low, intervals["percent"].high) == (percent[0], percent[-1])
    # every item Y/Y: kappa, AC1 and alpha undefined in every resample, percent 1
    constant = table_intervals(Table(4, 0, 0, 0), samples=20)
    assert constant["percent"] == Interval(1.0, 1.0, 1.0)
    for name in ("kappa", "alpha"):
        assert all(math.isnan(x) for x in (constant[name].estimate, constant[name].low, constant[name].high))
    assert constant["ac1"] == Interval(1.0, 1.0, 1.0)  # pi_Y = 1: p_e = 0, AC1 = p_o
    empty = table_intervals(Table(0, 0, 0, 0))
    assert set(empty) == set(TABLE_STATISTICS)
    assert all(math.isnan(x) for i in empty.values() for x in (i.estimate, i.low, i.high))


@pytest.mark.parametrize("record", [yes_no_statistics([("Y", "N")]), Interval(0.5, 0.1, 0.9), Table(1, 2, 3, 4)])
def test_results_are_immutable(record):
    field = dataclasses.fields(record)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, field, 0)


def test_bootstrap_defaults_are_1000_samples_95_percent_seed_0():
    # tail = (1 - 0.95) / 2: sorted values 1..1000, values[25] = 26 and values[974] = 975
    assert bootstrap(counting_statistic(), ["u"]) == Interval(0.0, 26.0, 975.0)
    mean = lambda units: sum(units) / len(units)  # noqa: E731
    data = [0, 1, 1, 5, 9, 2, 4]
    assert bootstrap(mean, data) == bootstrap(mean, data, samples=1000, level=0.95, seed=0)
    assert bootstrap(mean, data) != bootstrap(mean, data, seed=1)


def test_table_intervals_defaults_are_1000_samples_95_percent_seed_0():
    table = Table(9, 2, 4, 6)
    assert table_intervals(table) == table_intervals(table, samples=1000, level=0.95, seed=0)
    assert table_intervals(table) != table_intervals(table, seed=1)
    counts = np.random.default_rng(0).multinomial(21, np.array([9, 2, 4, 6]) / 21, size=1000)
    percent = sorted(table_statistics(*row)["percent"] for row in counts)
    assert (table_intervals(table)["percent"].low, table_intervals(table)["percent"].high) == (
        pytest.approx(percent[25]), pytest.approx(percent[974]))


def test_table_intervals_level_zero_on_two_samples_takes_floor_and_ceil_positions():
    table = Table(3, 2, 1, 4)
    counts = np.random.default_rng(2).multinomial(10, np.array([3, 2, 1, 4]) / 10, size=2)
    percent = sorted(table_statistics(*row)["percent"] for row in counts)
    assert percent[0] != percent[1]
    interval = table_intervals(table, samples=2, level=0.0, seed=2)["percent"]
    assert (interval.low, interval.high) == (pytest.approx(percent[1]), pytest.approx(percent[0]))


def test_wilson_bounds_are_clamped_where_rounding_leaves_zero_one():
    # unclamped, 0 of 7 (default z) gives low = -2.8e-17 and 12 of 12 with z = 1 gives high = 1 + 2.2e-16
    assert wilson_interval(0, 7).low == 0.0
    assert wilson_interval(12, 12, 1.0).high == 1.0


@pytest.mark.parametrize("cells", [(20, 5, 10, 15, 4), (0, 3, 4, 9, 1), (7, 0, 0, 2, 3), (0, 0, 0, 0, 2), (0, 1, 0, 0, 5)])
def test_table_statistics_with_can_t_tell_equal_yes_no_statistics(cells):
    """The quality page's table and the agreement page's pairs read a can't tell the same way."""
    *yes_no, unsure = cells
    pairs = pairs_of(*yes_no) + [("C", "Y"), ("N", "C"), ("C", "C")] * (unsure // 3) + [("Y", "C")] * (unsure % 3)
    table = table_from_pairs(pairs, cant_tell="C")
    assert (table, table.pairs) == (Table(*cells), len(pairs))
    stats, expected = table_statistics(*cells), yes_no_statistics(pairs)
    for name in TABLE_STATISTICS:
        assert stats[name] == pytest.approx(getattr(expected, name), nan_ok=True), name


def test_table_intervals_resample_the_can_t_tell_pairs_too():
    table = Table(12, 3, 5, 10, 6)
    intervals = table_intervals(table, samples=201, level=0.5, seed=4)
    counts = np.random.default_rng(4).multinomial(36, np.array([12, 3, 5, 10, 6]) / 36, size=201)
    values = sorted(table_statistics(*row)["percent"] for row in counts)
    assert intervals["percent"] == Interval(pytest.approx(22 / 36), pytest.approx(values[50]), pytest.approx(values[150]))
    assert intervals["kappa"].estimate == pytest.approx(table_statistics(12, 3, 5, 10)["kappa"])
