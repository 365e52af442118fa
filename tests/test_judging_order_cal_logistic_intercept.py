"""cal_order.fit_logistic's intercept is penalised by 1e-6 only (issue 19): with one class only, the intercept is
the finite root of n (sigmoid(w0) - 1) + 1e-6 w0 = 0 (all positive) and its mirror (all negative), found here by
bisection. Django-free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import cal_order as lib


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def root(n, positive):
    # gradient of the penalised log-loss in w0 (features all 0, so the other weights stay 0)
    def gradient(w0):
        return n * (sigmoid(w0) - (1.0 if positive else 0.0)) + 1e-6 * w0
    low, high = -29.0, 29.0
    for _ in range(200):
        middle = (low + high) / 2
        if gradient(middle) > 0:
            high = middle
        else:
            low = middle
    return (low + high) / 2


@pytest.mark.parametrize("n", [1, 3, 10])
@pytest.mark.parametrize("positive", [True, False])
def test_one_class_only_gives_the_root_of_the_intercept_gradient(n, positive):
    w = lib.fit_logistic(np.zeros((n, 2)), np.full(n, positive))
    assert w[1:].tolist() == [0.0, 0.0]
    expected = root(n, positive)
    assert abs(expected) > 10  # far from the start: the intercept penalty decides where it stops
    assert w[0] == pytest.approx(expected, abs=1e-6)
