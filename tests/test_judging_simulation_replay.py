"""The judging simulator (issue 20) on hand-made replays: positives found, judgments to reach 90% of them, the
point from which tau-b stays above 0.9, and scoring exactly at the checkpoints (pure numpy, no database)."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.judging_order import PoolView
from annotation.lib.judging_simulation import SimulationRun, simulate


def test_depth_replay_counts_positives_in_order():
    # one system; depths 1..5 fix the order 0, 1, 2, 3, 4; positives at items 1, 3, 4
    pool = PoolView.build(5, range(5), [0] * 5, [0] * 5, [1, 2, 3, 4, 5], num_systems=1, num_questions=1)
    run = simulate(pool, np.array([False, True, False, True, True]), "depth", seed=3, batch=2)
    assert run.sequence.tolist() == [0, 1, 2, 3, 4]
    assert run.found.tolist() == [0, 1, 1, 2, 3]
    assert run.judgments_for_positives(0.9) == 5  # ceil(2.7) = 3 positives: after the 5th judgment
    assert run.judgments_for_positives(0.5) == 4  # 2 positives


def test_tau_reach_is_the_point_from_which_tau_stays_above_the_target():
    run = SimulationRun("x", 0, np.arange(5), np.zeros(5), np.array([1, 2, 3, 4, 5]),
                        {"m": np.array([0.5, 0.95, 0.8, 0.92, 1.0]), "never": np.array([1.0, 1.0, 1.0, 1.0, 0.5]),
                         "nan": np.array([1.0, np.nan, 1.0, 1.0, 1.0])})
    assert run.judgments_for_tau("m") == 4
    assert run.judgments_for_tau("never") is None
    assert run.judgments_for_tau("nan") == 3  # an undefined tau counts as below


def test_systems_are_scored_exactly_at_the_checkpoints_against_the_reference():
    # systems 0 and 1 retrieve items {0, 1} and {2, 3}; a third system retrieves nothing judged positive
    pool = PoolView.build(4, [0, 1, 2, 3], [0, 0, 1, 1], [0] * 4, [1, 2, 1, 2], num_systems=3, num_questions=1)
    truth = np.array([True, True, False, True])
    seen = []

    def score(judged):
        seen.append(int(judged.sum()))
        found = truth & judged
        return {"P": np.array([found[:2].sum(), found[2:].sum(), 0.0])}

    reference = {"P": np.array([2.0, 1.0, 0.0])}
    run = simulate(pool, truth, "depth", seed=0, batch=3, checkpoints=[2, 4], score=score, reference=reference)
    assert seen == [2, 4] and run.checkpoints.tolist() == [2, 4]
    # after 2 judgments (items 0 and 2, the rank-1 ones, in either order): P = (1, 0, 0) -> tau-b vs (2, 1, 0):
    # pairs 01 concordant, 02 concordant, 12 tied in the first -> 2 / sqrt(3 * 2)
    assert run.taus["P"][0] == pytest.approx(2 / np.sqrt(6))
    assert run.taus["P"][1] == pytest.approx(1.0)
