"""PROBE (SPEC 5.4): rank transformer, train popularity, weights, grids, p-MRR and log-MRR.

Expected values are computed by hand in the comments (or by a naive dict-counting reference)."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.core.probe import (
    ALPHA_GRID,
    BETA_GRID,
    P_MRR_GRID,
    TrainPopularity,
    log_mrr,
    minmax_normalise,
    p_mrr,
    probe_alpha_grid,
    probe_beta_grid,
    probe_heatmap,
    probe_score,
    probe_weights,
    rank_transform,
)
from tests._raises_support import whole

ALPHAS = (1.0, 0.5, 0.0, -0.5, -1.0, 2.0, -3.0, 1e-9, -1e-9)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_rank_transform_is_one_at_rank_one_and_zero_at_rank_n(alpha: float) -> None:
    n = np.array([2, 3, 10, 14541])
    assert rank_transform(np.ones(4), n, alpha) == pytest.approx(np.ones(4), abs=1e-12)
    assert rank_transform(n.astype(float), n, alpha) == pytest.approx(np.zeros(4), abs=1e-12)


@pytest.mark.parametrize(
    ("rank", "n", "alpha", "expected"),
    [
        (2, 5, 1.0, (1 / 2 - 1 / 5) / (1 - 1 / 5)),  # 0.3 / 0.8 = 0.375
        (4, 16, 0.5, (1 / 2 - 1 / 4) / (1 - 1 / 4)),  # 1/3
        (4, 16, 0.0, 0.5),  # 1 - ln 4 / ln 16
        (2, 5, -1.0, 0.75),  # (2 - 5) / (1 - 5): linear in the rank
        (4, 16, -0.5, (2 - 4) / (1 - 4)),  # (sqrt 4 - sqrt 16) / (1 - sqrt 16) = 2/3
        (2.5, 5, 1.0, (0.4 - 0.2) / 0.8),  # fractional (tied) rank: 0.25
    ],
)
def test_rank_transform_hand_values(rank: float, n: int, alpha: float, expected: float) -> None:
    assert rank_transform(np.array([rank]), np.array([n]), alpha)[0] == pytest.approx(expected, rel=1e-12)


def test_rank_transform_single_candidate_is_perfect() -> None:
    # N = 1: only the answer is left, rank 1; the formulas are 0/0, we define f* = 1
    for alpha in ALPHAS:
        assert rank_transform(np.array([1.0]), np.array([1]), alpha)[0] == 1.0


def test_rank_transform_is_continuous_at_alpha_zero() -> None:
    ranks, n = np.array([1.0, 2.0, 7.5, 300.0]), np.array([10, 10, 80, 14541])
    assert rank_transform(ranks, n, 1e-8) == pytest.approx(rank_transform(ranks, n, 0.0), abs=1e-7)


@pytest.mark.parametrize("bad_rank", [0.5, 11.0, np.nan])
def test_rank_transform_rejects_ranks_outside_one_to_n(bad_rank: float) -> None:
    with pytest.raises(ValueError):
        rank_transform(np.array([1.0, bad_rank]), np.array([10, 10]), 1.0)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=100_000),
    alpha=st.floats(min_value=-3, max_value=3, allow_nan=False),
    data=st.data(),
)
def test_rank_transform_is_in_unit_interval_and_decreasing(n: int, alpha: float, data: st.DataObject) -> None:
    ranks = np.sort(np.array(data.draw(st.lists(st.floats(1, n), min_size=2, max_size=8))))
    values = rank_transform(ranks, np.full(len(ranks), n), alpha)
    assert np.all(values >= -1e-12) and np.all(values <= 1 + 1e-12)
    assert np.all(np.diff(values) <= 1e-12)


# Train triples (head, relation, tail), |T| = 5:
#   (0,0,1) (0,1,2) (1,0,2) (3,1,3) (0,0,2)
# d(0)=3, d(1)=2, d(2)=3, d(3)=2 (the self-loop contains 3 twice, as head and as tail), d(4)=0 (unseen)
# delta(a) = d(a)/10; delta(0|0)=2/3, delta(1|0)=1/3, delta(0|1)=1, delta(0|2)=2/3, delta(1|2)=1/3,
# delta(1|3)=1, delta(0|3)=0
TRAIN = np.array([(0, 0, 1), (0, 1, 2), (1, 0, 2), (3, 1, 3), (0, 0, 2)])


def test_train_popularity_hand_case() -> None:
    popularity = TrainPopularity.from_triples(TRAIN)
    entity_delta = popularity.entity_delta(np.array([0, 1, 2, 3, 4, -1]))
    assert entity_delta == pytest.approx([0.3, 0.2, 0.3, 0.2, 0.0, 0.0])
    entities = np.array([0, 0, 1, 2, 2, 3, 3, 4, 0])
    relations = np.array([0, 1, 0, 0, 1, 1, 0, 0, 7])  # relation 7 never seen
    expected = [2 / 3, 1 / 3, 1.0, 2 / 3, 1 / 3, 1.0, 0.0, 0.0, 0.0]
    assert popularity.relation_given_entity(entities, relations) == pytest.approx(expected)


def test_train_popularity_matches_naive_counting_on_nations(shared_data) -> None:
    lines = (shared_data / "nations" / "train.txt").read_text().split("\n")
    named = [line.split("\t") for line in lines if line.strip()]
    entity_ids = {name: i for i, name in enumerate(sorted({x for h, _, t in named for x in (h, t)}))}
    relation_ids = {name: i for i, name in enumerate(sorted({r for _, r, _ in named}))}
    triples = np.array([(entity_ids[h], relation_ids[r], entity_ids[t]) for h, r, t in named])
    # naive reference: a triple contains its head and its tail (a self-loop contains a twice)
    degree: Counter[int] = Counter()
    pair: Counter[tuple[int, int]] = Counter()
    for h, r, t in triples.tolist():
        for a in (h, t):
            degree[a] += 1
            pair[(a, r)] += 1
    popularity = TrainPopularity.from_triples(triples)
    rng = np.random.default_rng(3)
    entities = rng.integers(0, len(entity_ids), 500)
    relations = rng.integers(0, len(relation_ids), 500)
    expected_entity = [degree[a] / (2 * len(triples)) for a in entities.tolist()]
    expected_relation = [pair[(a, r)] / degree[a] if degree[a] else 0.0 for a, r in zip(entities, relations)]
    got_entity, got_relation = popularity.query_deltas(entities, relations)
    assert got_entity == pytest.approx(expected_entity)
    assert got_relation == pytest.approx(expected_relation)


# Evaluated queries (answer, relation, rank, N), alpha = 1:
#   q1: (0, 0, 1, 10)  f* = 1          delta_e 0.3  delta_r 2/3
#   q2: (2, 1, 10, 10) f* = 0          delta_e 0.3  delta_r 1/3
#   q3: (4, 0, 2, 3)   f* = 0.25       delta_e 0    delta_r 0   (unseen in train)
# eps_e = 0.3 (entities 1 and 3 with delta 0.2 are not evaluated), eps_r = 1/3
# beta = 1: w1 = 1/0.6 * 1/1 = 5/3, w2 = 1/0.6 * 1/(2/3) = 5/2, w3 = 1/0.3 * 1/(1/3) = 10
# PROBE = (5/3 + 10 * 0.25) / (5/3 + 5/2 + 10) = (25/6) / (85/6) = 5/17
QUERY_ANSWERS = np.array([0, 2, 4])
QUERY_RELATIONS = np.array([0, 1, 0])
QUERY_RANKS = np.array([1.0, 10.0, 2.0])
QUERY_N = np.array([10, 10, 3])


def _query_deltas() -> tuple[np.ndarray, np.ndarray]:
    return TrainPopularity.from_triples(TRAIN).query_deltas(QUERY_ANSWERS, QUERY_RELATIONS)


def test_probe_weighted_hand_case() -> None:
    entity_delta, relation_delta = _query_deltas()
    assert probe_weights(entity_delta, relation_delta, 1.0) == pytest.approx([5 / 3, 5 / 2, 10])
    assert probe_score(QUERY_RANKS, QUERY_N, entity_delta, relation_delta, 1.0, 1.0) == pytest.approx(5 / 17)


def test_probe_eps_comes_from_the_evaluated_queries_only() -> None:
    entity_delta, relation_delta = _query_deltas()
    # adding a query on entity 3 (delta 0.2, delta(1|3) = 2/2 = 1) lowers eps_e to 0.2: w3 = 1/0.2 * 3 = 15
    popularity = TrainPopularity.from_triples(TRAIN)
    e4, r4 = popularity.query_deltas(np.array([3]), np.array([1]))
    weights = probe_weights(np.r_[entity_delta, e4], np.r_[relation_delta, r4], 1.0)
    # eps_e = 0.2, eps_r = 1/3: w = [1/0.5 * 1, 1/0.5 * 3/2, 1/0.2 * 3, 1/0.4 * 3/4]
    assert weights == pytest.approx([2.0, 3.0, 15.0, 1.875])


def test_probe_all_zero_popularity_gives_equal_weights() -> None:
    weights = probe_weights(np.zeros(3), np.zeros(3), 0.6)
    assert weights == pytest.approx(np.full(3, weights[0]))


def test_probe_beta_zero_is_plain_mean_of_transform() -> None:
    entity_delta, relation_delta = _query_deltas()
    # alpha = 1: f* = [1, 0, 0.25]; alpha = -1: f* = [1, 0, 0.5]
    assert probe_score(QUERY_RANKS, QUERY_N, entity_delta, relation_delta, 1.0, 0.0) == pytest.approx(1.25 / 3)
    assert probe_score(QUERY_RANKS, QUERY_N, entity_delta, relation_delta, -1.0, 0.0) == pytest.approx(0.5)


def test_probe_grids_and_heatmap_agree_with_single_scores() -> None:
    entity_delta, relation_delta = _query_deltas()
    ranks = np.stack([QUERY_RANKS, [2.0, 1.0, 1.0], [5.0, 3.5, 3.0]])  # 3 systems x 3 queries
    heat = probe_heatmap(ranks, QUERY_N, entity_delta, relation_delta, normalise=False)
    assert heat.shape == (len(ALPHA_GRID), len(BETA_GRID), 3)
    for i, alpha in enumerate(ALPHA_GRID):
        for j, beta in enumerate(BETA_GRID):
            expected = [probe_score(r, QUERY_N, entity_delta, relation_delta, alpha, beta) for r in ranks]
            assert heat[i, j] == pytest.approx(expected)
    assert probe_alpha_grid(ranks, QUERY_N, entity_delta, relation_delta) == pytest.approx(heat[:, 0])
    assert probe_beta_grid(ranks, QUERY_N, entity_delta, relation_delta) == pytest.approx(heat[0, :])
    normalised = probe_heatmap(ranks, QUERY_N, entity_delta, relation_delta)
    assert normalised.min(axis=-1) == pytest.approx(np.zeros((5, 5)))
    assert normalised.max(axis=-1) == pytest.approx(np.ones((5, 5)))
    assert normalised[0, 0] == pytest.approx((heat[0, 0] - heat[0, 0].min()) / np.ptp(heat[0, 0]))


def test_minmax_normalise_constant_cell_is_zero() -> None:
    assert minmax_normalise(np.array([[0.3, 0.3], [1.0, 3.0]])) == pytest.approx(np.array([[0.0, 0.0], [0.0, 1.0]]))


def test_p_mrr_and_log_mrr_hand_values() -> None:
    ranks = np.array([1.0, 2.0, 4.0])
    assert p_mrr(ranks, 1.0) == pytest.approx((1 + 0.5 + 0.25) / 3)  # = MRR
    assert p_mrr(ranks, 0.5) == pytest.approx((1 + 2**-0.5 + 0.5) / 3)
    assert log_mrr(np.array([1.0, 3.0])) == pytest.approx((1 + math.log(2) / math.log(4)) / 2)  # 0.75
    per_system = np.array([[1.0, 2.0], [4.0, 4.0]])
    assert p_mrr(per_system, 1.0) == pytest.approx([0.75, 0.25])
    assert P_MRR_GRID == pytest.approx([1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4, 1])


def test_grids_are_the_spec_grids() -> None:
    # SPEC 5.4: alpha in {1, 0.5, 0, -0.5, -1} at beta = 0, beta in {0, 0.2, 0.4, 0.6, 0.8} at alpha = 1
    assert ALPHA_GRID == (1.0, 0.5, 0.0, -0.5, -1.0)
    assert BETA_GRID == (0.0, 0.2, 0.4, 0.6, 0.8)


def test_defaults_are_alpha_one_beta_zero_and_p_one() -> None:
    entity_delta, relation_delta = _query_deltas()
    # alpha = 1, beta = 0: mean of f* = [1, 0, 0.25] (hand values above)
    score = probe_score(QUERY_RANKS, QUERY_N, entity_delta, relation_delta)
    assert type(score) is float and score == pytest.approx(1.25 / 3)
    assert p_mrr(np.array([1.0, 4.0])) == pytest.approx((1 + 0.25) / 2)  # p = 1: MRR


def test_scores_of_one_ranking_are_floats_and_of_several_systems_arrays() -> None:
    ranks = np.array([[1.0, 3.0], [3.0, 3.0]])
    assert type(p_mrr(ranks[0])) is float and type(log_mrr(ranks[0])) is float
    assert log_mrr(ranks) == pytest.approx([(1 + 0.5) / 2, 0.5])  # ln 2 / ln 4 = 1/2
    per_system = probe_score(ranks, np.array([3, 3]), np.zeros(2), np.zeros(2))
    assert isinstance(per_system, np.ndarray) and per_system == pytest.approx([0.5, 0.0])


def test_invalid_input_messages() -> None:
    with pytest.raises(ValueError, match=whole("num_candidates must be >= 1")):
        rank_transform(np.array([1.0]), np.array([0]), 1.0)
    with pytest.raises(ValueError, match=whole("every rank must satisfy 1 <= rank <= num_candidates")):
        rank_transform(np.array([3.0]), np.array([2]), 1.0)
    with pytest.raises(ValueError, match=whole("ids must be non-negative")):
        TrainPopularity.from_triples(np.array([(0, 0, -1)]))
    for metric in (p_mrr, log_mrr):
        with pytest.raises(ValueError, match=whole("ranks must be >= 1")):
            metric(np.array([0.5]))
    with pytest.raises(ValueError, match=whole("normalisation across systems needs ranks of shape (systems, Q)")):
        probe_heatmap(QUERY_RANKS, QUERY_N, *_query_deltas())


def test_train_popularity_fields() -> None:
    popularity = TrainPopularity.from_triples(TRAIN)
    # d(a) of the hand case above; the relations are 0 and 1
    assert popularity.entity_degree.tolist() == [3, 2, 3, 2]
    assert popularity.num_relations == 2 and popularity.num_train_triples == 5
    sized = TrainPopularity.from_triples(TRAIN, num_entities=6, num_relations=4)
    assert sized.entity_degree.tolist() == [3, 2, 3, 2, 0, 0] and sized.num_relations == 4
    with pytest.raises(dataclasses.FrozenInstanceError):  # shared by every system's score: read-only
        popularity.num_relations = 3  # type: ignore[misc]


def test_relation_id_just_past_the_range_is_unseen() -> None:
    # relation 2 = num_relations for entity 0: never seen, even though the key 0 * 2 + 2 is entity 1's (1, 0)
    popularity = TrainPopularity.from_triples(TRAIN)
    assert popularity.relation_given_entity(np.array([0, 1]), np.array([2, 0])).tolist() == [0.0, 1.0]


def test_empty_and_single_triple_train() -> None:
    empty = TrainPopularity.from_triples(np.zeros((0, 3), dtype=np.int64))
    assert empty.entity_degree.shape == (0,) and empty.num_relations == 0
    sized = TrainPopularity.from_triples(np.zeros((0, 3), dtype=np.int64), num_entities=3, num_relations=2)
    assert sized.query_deltas(np.array([0, 2]), np.array([1, 0])) == (pytest.approx([0, 0]), pytest.approx([0, 0]))
    # one triple (0, 1, 2): entities 0 and 2 each fill one of the 2 slots, delta = 1/2; delta(1|0) = 1
    single = TrainPopularity.from_triples(np.array([(0, 1, 2)]))
    assert single.entity_delta(np.array([0, 1, 2])).tolist() == [0.5, 0.0, 0.5]
    assert single.relation_given_entity(np.array([0, 2, 0]), np.array([1, 1, 0])).tolist() == [1.0, 1.0, 0.0]


def test_all_zero_popularity_sets_eps_to_one() -> None:
    # eps = 1 by convention: (1 + 0)^-beta * (1 + 0)^-beta = 1
    assert probe_weights(np.zeros(3), np.zeros(3), 0.6) == pytest.approx(np.ones(3))


def test_heatmap_with_more_systems_than_queries_and_default_axis() -> None:
    entity_delta, relation_delta = _query_deltas()
    ranks = np.stack([QUERY_RANKS, [2.0, 1.0, 1.0], [5.0, 3.5, 3.0], [1.0, 1.0, 1.0]])  # 4 systems x 3 queries
    heat = probe_heatmap(ranks, QUERY_N, entity_delta, relation_delta, (1.0,), (1.0,), normalise=False)
    expected = [probe_score(r, QUERY_N, entity_delta, relation_delta, 1.0, 1.0) for r in ranks]
    assert heat.shape == (1, 1, 4) and heat[0, 0] == pytest.approx(expected)
    # the default axis is the last one (the systems), also for 3-d input
    cube = np.array([[[0.0, 2.0], [1.0, 1.0]], [[4.0, 5.0], [3.0, 9.0]]])
    assert minmax_normalise(cube) == pytest.approx(np.array([[[0, 1], [0, 0]], [[0, 1], [0, 1]]]))
