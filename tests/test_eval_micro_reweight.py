"""Reweighting by a relation distribution: identity with c_p/|T| weights, and a hand case."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.core import micro
from tests._raises_support import whole


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


def test_relation_distribution_hand_case() -> None:
    # relations of 4 triples: 0, 0, 2, 3 out of 5 relations -> [1/2, 0, 1/4, 1/4, 0]
    assert micro.relation_distribution(np.array([0, 0, 2, 3]), 5).tolist() == [0.5, 0.0, 0.25, 0.25, 0.0]
    assert micro.relation_distribution(np.array([1, 1])).tolist() == [0.0, 1.0]
    assert micro.relation_distribution(np.array([], dtype=np.int64)).shape == (0,)  # no triple, no relation


def test_relation_with_zero_weight_and_no_ranking_is_ignored() -> None:
    # relation 1 has weight 0 and no ranking: the mixture is relation 0 and 2 with weights 1/4, 3/4
    mixed = micro.reweighted(np.array([2.0, 4.0]), np.array([0, 2]), np.array([1.0, 0.0, 3.0]), hits=(3,))
    assert mixed == pytest.approx({"MR": 0.25 * 2 + 0.75 * 4, "MRR": 0.25 * 0.5 + 0.75 * 0.25, "Hits@3": 0.25})


@pytest.mark.parametrize("weights", [[1.0, -0.5], [0.0, 0.0], [-1.0, 0.0]])
def test_weights_must_be_non_negative_with_a_positive_sum(weights: list[float]) -> None:
    with pytest.raises(ValueError, match=whole("weights must be non-negative with a positive sum")):
        micro.reweighted(np.array([1.0, 2.0]), np.array([0, 1]), np.array(weights))


def test_ranking_of_a_relation_without_weight_is_an_error() -> None:
    with pytest.raises(ValueError, match=whole("a ranking has a relation id without a weight")):
        micro.reweighted(np.array([1.0, 2.0]), np.array([0, 2]), np.array([0.5, 0.5]))


def test_missing_relations_message_names_the_first_five() -> None:
    weights = np.ones(8)
    with pytest.raises(ValueError, match=whole("relations [1, 2, 3, 4, 5] have weight but no ranking")):
        micro.reweighted(np.array([1.0, 2.0]), np.array([0, 7]), weights)


def test_no_ranking_at_all_is_missing_every_weighted_relation() -> None:
    with pytest.raises(ValueError, match=whole("relations [0, 2] have weight but no ranking")):
        micro.reweighted(np.array([]), np.array([], dtype=np.int64), np.array([1.0, 0.0, 1.0]))
