"""annotation/lib/judging_simulation.py without Django (issue 19): the documented constants, SimulationRun's
counts (positives found, judgments for a share of them, for a stable tau) on hand-made runs, the default
checkpoints and batch, the metric orientation of the taus, and simulate's checks and checkpoint handling."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import judging_simulation as sim
from annotation.lib.judging_order import JudgingState, PoolView, order_items, tiebreak
from tests._raises_support import whole


def run_of(found, checkpoints=(1,), taus=None):
    found = np.asarray(found, dtype=np.int64)
    return sim.SimulationRun("x", 0, np.arange(found.size), found, np.asarray(checkpoints), taus or {})


def test_the_documented_constants():
    assert (sim.POSITIVES_TARGET, sim.TAU_TARGET, sim.DECISIONS) == (0.9, 0.9, 200)


def test_run_defaults_and_total_positives():
    run = sim.SimulationRun("depth", 3, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert run.taus == {} and run.total_positives == 0
    other = sim.SimulationRun("depth", 3, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert other.taus is not run.taus  # one dict per run
    assert run_of([0, 1, 1, 2]).total_positives == 2


@pytest.mark.parametrize("found, share, expected", [
    ([0, 0, 0], 0.9, 0),  # no positive: nothing to find
    ([], 0.9, 0),
    ([0, 0, 1], 0.9, 3),  # ceil(0.9) = 1 positive
    ([1, 1, 1], 0.9, 1),
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], 0.9, 10),  # ceil(5.4) = 6
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], 0.5, 5),  # exactly 3: the 3rd positive, not a 4th
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], 0.0, 0),
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], 1.0, 10),
    # 3 + 5e-10 counts as 3 (within 1e-9), 3 + 1.5e-9 as more than 3
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], (3 + 5e-10) / 6, 5),
    ([0, 1, 1, 2, 3, 3, 4, 5, 5, 6], (3 + 1.5e-9) / 6, 7),
])
def test_judgments_for_a_share_of_the_positives(found, share, expected):
    assert run_of(found).judgments_for_positives(share) == expected


def test_judgments_for_positives_default_share():
    assert run_of([0, 1, 1, 2, 3, 3, 4, 5, 5, 6]).judgments_for_positives() == 10  # 0.9 of 6: 6
    assert run_of([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).judgments_for_positives() == 9


@pytest.mark.parametrize("taus, target, expected", [
    ([0.95, 0.91, 1.0], 0.9, 10),  # always above: from the first checkpoint
    ([0.9, 0.9, 0.9], 0.9, 10),  # the target itself counts as reached
    ([0.5, 0.95, 0.92], 0.9, 20),
    ([0.95, 0.5, 0.92], 0.9, 30),
    ([0.95, 0.95, 0.5], 0.9, None),  # below at the last checkpoint: never stable
    ([0.95, math.nan, 0.95], 0.9, 30),
    ([0.6, 0.7, 0.8], 0.65, 20),
])
def test_judgments_for_a_stable_tau(taus, target, expected):
    run = run_of([0, 0, 0], checkpoints=[10, 20, 30], taus={"m": np.array(taus)})
    assert run.judgments_for_tau("m", target) == expected


def test_judgments_for_tau_without_values_and_default_target():
    run = run_of([0], checkpoints=[5, 9], taus={"m": np.array([0.85, 0.95]), "empty": np.zeros(0)})
    assert run.judgments_for_tau("m") == 9
    assert run.judgments_for_tau("missing") is None
    assert run.judgments_for_tau("empty") is None


@pytest.mark.parametrize("num_items, points, expected", [
    (0, 50, []), (-3, 50, []), (1, 50, [1]), (10, 50, list(range(1, 11))), (100, 50, list(range(2, 101, 2))),
    (10, 3, [4, 7, 10]), (10, 4, [3, 5, 8, 10]), (7, 1, [7]),
])
def test_default_checkpoints(num_items, points, expected):
    got = sim.default_checkpoints(num_items, points)
    assert got.tolist() == expected and got.dtype == np.int64


def test_default_checkpoints_default_points():
    assert sim.default_checkpoints(1000).tolist() == list(range(20, 1001, 20))


@pytest.mark.parametrize("num_items, expected", [(0, 1), (1, 1), (199, 1), (200, 1), (399, 1), (400, 2), (1000, 5)])
def test_default_batch(num_items, expected):
    assert sim.default_batch(num_items) == expected


def test_oriented_taus_flip_the_lower_is_better_metrics():
    reference = {"MRR": np.array([0.5, 0.3, 0.1]), "MR": np.array([2.0, 5.0, 9.0])}
    same = sim.oriented_taus(reference, {"MRR": np.array([0.4, 0.2, 0.0]), "MR": np.array([1.0, 4.0, 8.0])})
    assert same == {"MRR": pytest.approx(1.0), "MR": pytest.approx(1.0)}
    reversed_ = sim.oriented_taus(reference, {"MRR": np.array([0.0, 0.2, 0.4]), "MR": np.array([8.0, 4.0, 1.0])})
    assert reversed_ == {"MRR": pytest.approx(-1.0), "MR": pytest.approx(-1.0)}
    # values that differ by less than 1e-12 relative are ties: tau-b of (1, 0, 0) against (2, 1, 0)
    tied = sim.oriented_taus({"m": np.array([2.0, 1.0, 0.0])}, {"m": np.array([1.0, 1e-300, 0.0])})
    assert tied["m"] == pytest.approx(2 / math.sqrt(6))
    # 1.5e-12 of the largest value apart: a real difference (1e-12 is the tolerance), 0.5e-12: a tie
    apart = sim.oriented_taus({"m": np.array([2.0, 1.0, 0.0])}, {"m": np.array([1.0, 1.0 - 1.5e-12, 0.0])})
    assert apart["m"] == pytest.approx(1.0)
    close = sim.oriented_taus({"m": np.array([2.0, 1.0, 0.0])}, {"m": np.array([1.0, 1.0 - 0.5e-12, 0.0])})
    assert close["m"] == pytest.approx(2 / math.sqrt(6))


def depth_pool(n):
    return PoolView.build(n, range(n), [0] * n, [0] * n, list(range(1, n + 1)), num_systems=1, num_questions=1)


def test_simulate_checks_the_oracle_with_a_whole_message():
    with pytest.raises(ValueError, match=whole("the oracle needs one label per pool item (3), got (2,)")):
        sim.simulate(depth_pool(3), [True, False], "depth")


@pytest.mark.parametrize("order", ["depth", "maxmean"])
def test_simulate_scores_only_checkpoints_within_the_pool(order):
    seen = []

    def score(judged):
        seen.append(int(judged.sum()))
        return {"m": np.array([float(judged.sum()), 0.0])}

    truth = np.array([True, False, True, False, True])
    run = sim.simulate(depth_pool(5), truth, order, batch=2, checkpoints=[0, -1, 3, 3, 1, 5, 6, 9],
                       score=score, reference={"m": np.array([1.0, 0.0])})
    assert seen == [1, 3, 5] and run.checkpoints.tolist() == [1, 3, 5]
    assert sorted(run.sequence.tolist()) == list(range(5)) and run.found[-1] == 3
    assert run.taus["m"].tolist() == [1.0, 1.0, 1.0] and (run.order, run.seed) == (order, 0)
    # without a score: the checkpoints are the points themselves, no tau
    bare = sim.simulate(depth_pool(5), truth, order, batch=2, checkpoints=[4, 2, 7])
    assert bare.checkpoints.tolist() == [2, 4] and bare.taus == {}
    # a score without a reference (or the reverse) scores nothing either
    for half in (dict(score=score), dict(reference={"m": np.array([1.0, 0.0])})):
        seen.clear()
        alone = sim.simulate(depth_pool(5), truth, order, batch=2, checkpoints=[4, 2], **half)
        assert seen == [] and alone.checkpoints.tolist() == [2, 4] and alone.taus == {}
    # default checkpoints and batch: every judgment count of a small pool
    assert sim.simulate(depth_pool(5), truth, order).checkpoints.tolist() == [1, 2, 3, 4, 5]


def test_simulate_batches_stop_at_checkpoints():
    # depth order with a batch of 4: without the checkpoint at 2 the first batch would hold 4 judgments
    seen = []

    def score(judged):
        seen.append(np.flatnonzero(judged).tolist())
        return {"m": np.array([1.0, 0.0])}

    sim.simulate(depth_pool(6), np.ones(6, dtype=bool), "depth", batch=4, checkpoints=[2, 6], score=score,
                 reference={"m": np.array([1.0, 0.0])})
    assert seen == [[0, 1], [0, 1, 2, 3, 4, 5]]
    # a checkpoint inside a later batch: 1, then 2 more (not the whole batch of 4), then the rest
    seen.clear()
    sim.simulate(depth_pool(6), np.ones(6, dtype=bool), "depth", batch=4, checkpoints=[1, 3, 6], score=score,
                 reference={"m": np.array([1.0, 0.0])})
    assert seen == [[0], [0, 1, 2], [0, 1, 2, 3, 4, 5]]


@pytest.mark.parametrize("order", ["maxmean", "move_to_front"])
def test_adaptive_orders_are_asked_again_after_every_batch(order):
    # systems A (items 0-2) and B (items 3-5); A's items are all Y, B's all N: the labels steer the order
    pool = PoolView.build(6, range(6), [0, 0, 0, 1, 1, 1], [0] * 6, [1, 2, 3, 1, 2, 3], num_systems=2,
                          num_questions=1)
    truth = np.array([True, True, True, False, False, False])
    judged, positive, expected = np.zeros(6, bool), np.zeros(6, bool), []
    while len(expected) < 6:  # the reference: ask the order again after each label
        item = int(order_items(order, pool, JudgingState(judged, positive), seed=4, ties=tiebreak(6, 4), limit=1)[0])
        expected.append(item)
        judged[item], positive[item] = True, truth[item]
    run = sim.simulate(pool, truth, order, seed=4, batch=1)
    assert run.sequence.tolist() == expected
    static = order_items(order, pool, JudgingState.empty(6), seed=4, ties=tiebreak(6, 4)).tolist()
    assert expected != static  # the labels did change the order
