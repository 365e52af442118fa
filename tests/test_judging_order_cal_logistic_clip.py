"""cal_order.fit_logistic clips the logits at +-30 (issue 19): on separable data with an almost-zero penalty the
weight grows until the logits pass 30, where the clipped probabilities stop moving, so the fit is the root of the
*clipped* gradient: one positive at x = 1 and one negative at x = -1 give
(1 - sigmoid(30)) + sigmoid(-30) = l2 * w. Django-free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import cal_order as lib


@pytest.mark.parametrize("logit", [33.0, 40.0])
def test_separable_pair_stops_where_the_clipped_gradient_is_zero(logit):
    tail_positive = 1.0 - 1.0 / (1.0 + math.exp(-30.0))  # as the fit computes p - y for the positive
    tail_negative = 1.0 / (1.0 + math.exp(30.0))
    l2 = (tail_positive + tail_negative) / logit
    w = lib.fit_logistic(np.array([[1.0], [-1.0]]), np.array([True, False]), l2=l2, steps=1000)
    assert abs(w[0]) < 1e-9  # symmetric data: no intercept
    # Newton converges linearly here (its Hessian still sees the unclipped curvature): it stops at a step below
    # 1e-5, up to ~logit * 1e-5 short of the root
    assert w[1] == pytest.approx(logit, abs=1e-3)
