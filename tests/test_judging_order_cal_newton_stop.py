"""cal_order.fit_logistic stops at the first Newton step whose largest change is below 1e-5 (issue 19): with
``steps`` = k it returns the weights after k steps, so the run of fits for k = 0, 1, ... shows every step; the full
fit equals the fit cut at that first small step, and every earlier step was at least 1e-5. Django-free.

The seeds are data where one step falls in [1e-5, 2e-5) just before the stop (a threshold of 2e-5 would stop
one step early)."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib import cal_order as lib


def data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 40))
    features = rng.normal(size=(n, 2))
    return features, (features[:, 0] + rng.normal(0, 1, n)) > 0


@pytest.mark.parametrize("seed", [11, 20, 37])
def test_newton_stops_at_the_first_step_below_1e_5(seed):
    features, labels = data(seed)
    fits = [lib.fit_logistic(features, labels, steps=k) for k in range(lib.NEWTON_STEPS + 1)]
    steps = [float(np.max(np.abs(fits[k] - fits[k - 1]))) for k in range(1, len(fits))]
    stop = next(k for k, size in enumerate(steps, start=1) if size < 1e-5)  # the first small step
    assert stop < lib.NEWTON_STEPS
    assert steps[stop - 1] > 0  # the small step itself is taken (the fit before it had not stopped yet)
    assert any(1e-5 <= size < 2e-5 for size in steps[:stop - 1])
    # no step after it: the full fit and every longer cut are the fit cut at that step, bit for bit
    for k in range(stop, len(fits)):
        assert np.array_equal(fits[k], fits[stop])
    assert np.array_equal(lib.fit_logistic(features, labels), fits[stop])
    assert np.array_equal(lib.fit_logistic(features, labels, steps=100), fits[stop])
