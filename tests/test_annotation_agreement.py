"""Agreement statistics on hand-computed tables."""
from __future__ import annotations

import math

import pytest

from annotation.lib.agreement import (
    bootstrap,
    cohen_kappa,
    gwet_ac1,
    krippendorff_alpha_nominal,
    pairs_to_units,
    percent_agreement,
    wilson_interval,
)

# 2x2 table (rater 1 rows, rater 2 columns): YY=20, YN=5, NY=10, NN=15 (n=50).
TABLE = [("Y", "Y")] * 20 + [("Y", "N")] * 5 + [("N", "Y")] * 10 + [("N", "N")] * 15


def test_percent_agreement_and_kappa():
    assert percent_agreement(TABLE) == pytest.approx(0.7)
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> kappa = (0.7 - 0.5) / 0.5 = 0.4
    assert cohen_kappa(TABLE) == pytest.approx(0.4)


def test_gwet_ac1():
    # pi_Y = (25 + 30) / 100 = 0.55; p_e = 2 * 0.55 * 0.45 / (2 - 1) = 0.495; AC1 = (0.7 - 0.495) / 0.505
    assert gwet_ac1(TABLE, ("Y", "N")) == pytest.approx(0.205 / 0.505)


def test_kappa_paradox_is_what_ac1_fixes():
    skewed = [("N", "N")] * 90 + [("Y", "N")] * 5 + [("N", "Y")] * 5
    assert percent_agreement(skewed) == pytest.approx(0.9)
    # p_e(kappa) = 0.95*0.95 + 0.05*0.05 = 0.905 -> kappa = (0.9 - 0.905) / 0.095
    assert cohen_kappa(skewed) == pytest.approx((0.9 - 0.905) / 0.095)
    # pi_Y = 0.05 -> p_e(AC1) = 2 * 0.05 * 0.95 = 0.095 -> AC1 = (0.9 - 0.095) / 0.905
    assert gwet_ac1(skewed, ("Y", "N")) == pytest.approx(0.805 / 0.905)


def test_alpha_two_raters_hand_computed():
    # Coincidences: o_YY = 40, o_NN = 30, o_YN = o_NY = 15; n_Y = 55, n_N = 45, n = 100.
    # alpha = 1 - (n - 1) * (o_YN + o_NY) / (2 n_Y n_N) = 1 - 99 * 30 / 4950 = 0.4
    assert krippendorff_alpha_nominal(pairs_to_units(TABLE)) == pytest.approx(0.4)


def test_alpha_many_raters_with_missing_values():
    # Krippendorff (2011) style example, nominal, 3 raters, missing values (None).
    units = [
        ["a", "a", None],
        ["b", "b", "b"],
        ["a", "b", "a"],
        ["c", "c", "c"],
        [None, "a", None],  # not pairable: ignored
    ]
    # Coincidences: unit1: o_aa += 2/1; unit2: o_bb += 6/2 = 3; unit3 (m=3): o_aa += 2/2 = 1, o_ab = o_ba += 2/2 = 1;
    # unit4: o_cc += 3. n_a = 2 + 1 + 1 = 4, n_b = 3 + 1 = 4, n_c = 3, n = 11.
    # D_o sum = o_ab + o_ba = 2; D_e sum = 2*(n_a n_b + n_a n_c + n_b n_c) = 2*(16 + 12 + 12) = 80
    # alpha = 1 - (n - 1) * 2 / 80 = 1 - 10 * 2 / 80 = 0.75
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.75)


def test_undefined_cases_are_nan():
    assert math.isnan(cohen_kappa([]))
    assert math.isnan(cohen_kappa([("Y", "Y")] * 3))  # chance agreement 1
    assert math.isnan(krippendorff_alpha_nominal([["Y", "Y"], ["Y", "Y"]]))
    assert math.isnan(krippendorff_alpha_nominal([["Y"]]))


def test_bootstrap_and_wilson():
    interval = bootstrap(lambda units: percent_agreement(units), TABLE, samples=200, seed=1)
    assert interval.estimate == pytest.approx(0.7) and interval.low < 0.7 < interval.high
    w = wilson_interval(9, 10)
    assert w.estimate == pytest.approx(0.9) and 0.55 < w.low < 0.6 and 0.98 < w.high <= 1.0
