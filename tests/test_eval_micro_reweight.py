"""Reweighting by a relation distribution: identity with c_p/|T| weights, and a hand case."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core import micro


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_test_set_distribution_gives_the_plain_micro_mean(seed: int) -> None:
    rng = np.random.default_rng(seed)
    num_triples, num_relations = 500, 17
    triple_relation = rng.integers(0, num_relations, size=num_triples)
    # Every triple yields a head and a tail ranking.
    relation = np.repeat(triple_relation, 2)
    ranks = rng.integers(1, 200, size=2 * num_triples) + rng.choice([0.0, 0.5], size=2 * num_triples)
    weights = micro.relation_distribution(triple_relation, num_relations)
    assert weights.sum() == pytest.approx(1.0)

    plain = micro.micro_metrics(ranks)
    mixed = micro.reweighted(ranks, relation, weights)
    for name in plain:
        assert mixed[name] == pytest.approx(plain[name], rel=1e-12)


def test_other_distribution_hand_case() -> None:
    ranks = np.array([1.0, 3.0, 2.0, 10.0, 5.0, 5.0])
    relation = np.array([0, 0, 1, 1, 2, 2])
    # Only relations 0 and 1, equally weighted (unnormalised weights are normalised).
    mixed = micro.reweighted(ranks, relation, np.array([2.0, 2.0, 0.0]), hits=(3,))
    assert mixed["MRR"] == pytest.approx(0.5 * (1 + 1 / 3) / 2 + 0.5 * (0.5 + 0.1) / 2)
    assert mixed["MR"] == pytest.approx(0.5 * 2 + 0.5 * 6)
    assert mixed["Hits@3"] == pytest.approx(0.5 * 1 + 0.5 * 0.5)


def test_weight_on_a_relation_without_rankings_is_an_error() -> None:
    with pytest.raises(ValueError, match="no ranking"):
        micro.reweighted(np.array([1.0, 2.0]), np.array([0, 0]), np.array([0.5, 0.5]))
