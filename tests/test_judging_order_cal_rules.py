"""annotation/lib/cal_order.py without Django (issue 19): each piece against a plain-Python reference written from
its doc: the static KG features (counted with loops over the triples), the pool's static and dynamic feature
columns, the leave-one-out yields, the blocked weighted Gram matrix, the fitted logistic regression (its optimality
condition), the cold start, the positions and the three key kinds (cal, cal_top, cal_mix)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def test_the_documented_constants():
    assert (lib.MIN_CLASS, lib.L2, lib.SHRINK, lib.TOP_RANK, lib.DEPTH_SHARE, lib.NEWTON_STEPS) == \
        (3, 1.0, 8.0, 1, 0.3, 25)
    assert lib.CANDIDATE_FEATURES == ("log_degree", "log_role_count", "role_fit", "log_role_share")


@pytest.mark.parametrize("seed", range(30))
def test_candidate_features_against_loops_over_the_triples(seed):
    rng = np.random.default_rng(seed)
    entities, relations = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    train = rng.integers(0, [entities, relations, entities], size=(int(rng.integers(0, 15)), 3))
    k = int(rng.integers(0, 8))
    # candidates may lie beyond num_entities (an entity without triples), relations beyond train's
    candidates = rng.integers(0, entities + 2, k)
    rel = rng.integers(0, relations + 1, k)
    sides = rng.integers(0, 2, k)
    got = lib.candidate_features(candidates, rel, sides, train, entities)
    assert got.shape == (k, 4)
    triples = [tuple(row) for row in train.tolist()]
    for row, (c, r, s) in enumerate(zip(candidates.tolist(), rel.tolist(), sides.tolist())):
        degree = sum(h == c for h, _, _ in triples) + sum(t == c for _, _, t in triples)
        role = sum(1 for h, rr, t in triples if rr == r and (t if s == 1 else h) == c)
        size = sum(1 for _, rr, _ in triples if rr == r)
        expected = [math.log1p(degree), math.log1p(role), float(role > 0), math.log((role + 1) / (size + 1))]
        assert got[row].tolist() == pytest.approx(expected, abs=1e-12), (c, r, s)


def test_features_from_counts_by_hand():
    got = lib.features_from_counts(np.array([0, 3]), np.array([0, 2]), np.array([4, 5]))
    assert np.allclose(got, [[0.0, 0.0, 0.0, math.log(1 / 5)],
                                          [math.log(4), math.log(3), 1.0, math.log(3 / 6)]], rtol=0, atol=1e-12)


def reference_loo(group, state, prior):
    out = []
    for i, g in enumerate(group):
        others = [k for k in range(len(group)) if group[k] == g and k != i and state.judged[k]]
        p = sum(bool(state.positive[k]) for k in others)
        value_prior = prior if np.isscalar(prior) else prior[i]
        out.append((p + lib.SHRINK * value_prior) / (len(others) + lib.SHRINK))
    return out


@pytest.mark.parametrize("seed", range(15))
def test_leave_one_out_yield_against_a_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    group = rng.integers(0, 3, n)
    judged = rng.random(n) < 0.6
    state = JudgingState(judged, judged & (rng.random(n) < 0.5))
    prior = rng.random(n)
    got = lib._loo_yield(group, 3, state, prior)
    assert got.tolist() == pytest.approx(reference_loo(group.tolist(), state, prior), abs=1e-12)
    assert lib._loo_yield(group, 3, state, 0.25).tolist() == \
        pytest.approx(reference_loo(group.tolist(), state, 0.25), abs=1e-12)


def random_pool(seed, *, candidates=True, features=True, groups=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    systems, questions = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    hits = int(rng.integers(1, 3 * n))
    relations = rng.integers(0, 3, questions)
    extra = dict(question_relation=relations,
                 question_group=relations % 2 if groups is None else np.full(questions, groups),
                 question_known=rng.integers(0, 20, questions))
    if candidates:
        extra["item_candidate"] = rng.integers(0, 4, n)
    if features:
        extra["item_features"] = rng.normal(size=(n, 2))
    pool = PoolView.build(n, rng.integers(0, n, hits), rng.integers(0, systems, hits), rng.integers(0, questions, hits),
                          rng.integers(1, 8, hits), num_systems=systems, num_questions=questions,
                          depth=rng.integers(1, 9, n), **extra)
    return pool, rng


def hit_rows(pool):
    return list(zip(pool.hit_item.tolist(), pool.hit_system.tolist(), pool.hit_question.tolist(),
                    pool.hit_rank.tolist()))


def reference_static(pool):
    n, systems = pool.num_items, max(pool.num_systems, 1)
    rows = [[0.0] * systems for _ in range(n)]
    votes = [set() for _ in range(n)]
    for item, system, _, rank in hit_rows(pool):
        rows[item][system] = max(rows[item][system], 1.0 / rank)
        votes[item].add(system)
    question = pool.item_question.tolist()
    for i in range(n):
        rows[i] += [math.log(pool.depth[i]), float(len(votes[i]))]
        known = math.log1p(pool.question_known[question[i]])
        rows[i].append(known)
    groups = [int(pool.question_group[question[i]]) for i in range(n)]
    used = sorted(set(groups))
    if len(used) > 1:
        for i in range(n):
            one_hot = [float(groups[i] == g) for g in used]
            rows[i] += one_hot + [value * rows[i][systems + 2] for value in one_hot]
    if pool.item_candidate is not None:
        candidate = pool.item_candidate.tolist()
        for i in range(n):
            rows[i].append(math.log(candidate.count(candidate[i])))
    if pool.item_features is not None:
        for i in range(n):
            rows[i] += pool.item_features[i].tolist()
    return rows


@pytest.mark.parametrize("seed", range(20))
def test_static_features_against_a_reference(seed):
    pool, _ = random_pool(seed, candidates=seed % 2 == 0, features=seed % 3 != 0, groups=0 if seed % 4 == 1 else None)
    assert np.allclose(lib._static(pool), np.array(reference_static(pool)), rtol=0, atol=1e-12)
    assert lib._static(pool) is lib._static(pool)  # kept on the view


def logit(p):
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p) - math.log1p(-p)


def reference_dynamic(pool, state):
    n = pool.num_items
    base = (state.positive.sum() + 1.0) / (state.judged.sum() + 2.0)
    question = pool.item_question.tolist()
    relation = [int(pool.question_relation[q]) for q in question]
    group = [int(pool.question_group[q]) for q in question]
    group_yield = reference_loo(group, state, base)
    relation_yield = reference_loo(relation, state, np.array(group_yield))
    question_yield = reference_loo(question, state, np.array(relation_yield))
    rows = [[logit(question_yield[i]), logit(relation_yield[i])] for i in range(n)]
    if pool.item_candidate is not None:
        # the candidate's yield on this relation and side (the group holds the side)
        role = [(int(pool.item_candidate[i]), relation[i], group[i]) for i in range(n)]
        role_yield = reference_loo(role, state, np.array(relation_yield))
        for i in range(n):
            rows[i].append(logit(role_yield[i]))
    return rows


@pytest.mark.parametrize("seed", range(20))
def test_dynamic_features_against_a_reference(seed):
    pool, rng = random_pool(seed, candidates=seed % 2 == 0)
    judged = rng.random(pool.num_items) < 0.6
    state = JudgingState(judged, judged & (rng.random(pool.num_items) < 0.5))
    assert np.allclose(lib._dynamic(pool, state), np.array(reference_dynamic(pool, state)), rtol=0, atol=1e-9)


@pytest.mark.parametrize("rows, chunk", [(1, 256), (255, 256), (256, 256), (257, 256), (600, 256), (10, 3)])
def test_weighted_gram_in_blocks_is_the_whole_product(rows, chunk):
    rng = np.random.default_rng(rows)
    x, weight = rng.normal(size=(rows, 4)), rng.random(rows)
    expected = x.T @ np.diag(weight) @ x
    assert np.allclose(lib._weighted_gram(x, weight, chunk), expected, rtol=1e-12, atol=1e-12)
    if chunk == 256:
        assert np.allclose(lib._weighted_gram(x, weight), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_logistic_fit_satisfies_its_optimality_condition(seed):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(30, 3))
    labels = (features[:, 0] + rng.normal(0, 1, 30)) > 0
    for l2 in (None, 0.5, 3.0):
        w = lib.fit_logistic(features, labels, l2)
        x = np.hstack([np.ones((30, 1)), features])
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        penalty = np.array([1e-6] + [1.0 if l2 is None else l2] * 3)
        # the gradient of the penalised log-loss is 0 at the optimum (the intercept almost unpenalised)
        assert np.abs(x.T @ (p - labels) + penalty * w).max() < 1e-6
    # one Newton step from the start stays short of the optimum; no step leaves the start (the prior's log-odds)
    start = lib.fit_logistic(features, labels, steps=0)
    assert start.tolist() == pytest.approx([logit((labels.sum() + 0.5) / 31.0), 0.0, 0.0, 0.0], abs=1e-12)
    one = lib.fit_logistic(features, labels, steps=1)
    full = lib.fit_logistic(features, labels)
    assert np.abs(one - full).max() > 1e-5


def test_cold_start_and_positions_by_hand():
    # depths 3, 1, 1, 2; votes 1, 2, 1, 0
    pool = PoolView.build(4, [0, 1, 1, 2], [0, 0, 1, 1], [0] * 4, [3, 1, 2, 1], num_systems=2, num_questions=1,
                          depth=[9, 9, 9, 2])
    assert pool.depth.tolist() == [3, 1, 1, 2]
    # (max depth 3 - depth) * (max votes 2 + 1) + votes
    assert lib._cold_start(pool).tolist() == [0 * 3 + 1, 2 * 3 + 2, 2 * 3 + 1, 1 * 3 + 0]
    # unjudged first by key (ties by index), then the judged ones by key
    keys = np.array([5, 7, 5, 9, 1])
    unjudged = np.array([True, True, True, False, True])
    assert lib._position(keys, unjudged).tolist() == [1, 0, 2, 4, 3]


def labelled_state(pool, rng, enough=True):
    n = pool.num_items
    judged = np.zeros(n, dtype=bool)
    positive = np.zeros(n, dtype=bool)
    order = rng.permutation(n)
    count = lib.MIN_CLASS if enough else lib.MIN_CLASS - 1
    judged[order[:2 * count]] = True
    positive[order[:count]] = True
    return JudgingState(judged, positive)


def reference_scores(pool, state):
    features = np.hstack([np.array(reference_static(pool)), np.array(reference_dynamic(pool, state))])
    train = state.judged
    mean, scale = features[train].mean(axis=0), features[train].std(axis=0)
    scale = np.where(scale < 1e-9, 1.0, scale)
    standard = (features - mean) / scale
    w = lib.fit_logistic(standard[train], state.positive[train])
    return w[0] + standard @ w[1:]


def bigger_pool(seed, **options):
    rng = np.random.default_rng(seed)
    n = 16
    items = np.r_[np.arange(n), rng.integers(0, n, 8)]
    pool = PoolView.build(n, items, rng.integers(0, 3, items.size), rng.integers(0, 2, items.size),
                          rng.integers(1, 6, items.size), num_systems=3, num_questions=2, question_relation=[0, 1],
                          question_group=[0, 1], question_known=[0, 5], item_candidate=rng.integers(0, 5, n),
                          item_features=rng.normal(size=(n, 2)), **options)
    return pool, rng


@pytest.mark.parametrize("seed", range(6))
def test_cal_scores_and_keys_against_a_reference(seed):
    pool, rng = bigger_pool(seed)
    too_few = labelled_state(pool, rng, enough=False)
    assert lib.cal_scores(pool, too_few) is None
    cold = lib._cold_start(pool)
    assert lib.cal_keys(pool, too_few).tolist() == cold.tolist()
    # cold start with cal_top: rank-1 items (depth 1) above all others
    top = lib.cal_keys(pool, too_few, top_first=True)
    assert top.tolist() == (cold + (pool.depth <= 1) * (cold.max() + 1)).tolist()
    # cal_mix before the model is fitted: the cold start alone
    assert lib.cal_keys(pool, too_few, depth_share=0.3).tolist() == cold.tolist()

    state = labelled_state(pool, rng)
    scores = lib.cal_scores(pool, state)
    assert scores.tolist() == pytest.approx(reference_scores(pool, state).tolist(), abs=1e-6)
    rounded = np.round(scores, 9)
    keys = lib.cal_keys(pool, state)
    # keys order by score, then by the cold start
    for i in range(pool.num_items):
        for j in range(pool.num_items):
            expected = (rounded[i], cold[i]) > (rounded[j], cold[j])
            assert (keys[i] > keys[j]) == expected
    top = lib.cal_keys(pool, state, top_first=True)
    assert top.tolist() == (keys + (pool.depth <= 1) * (keys.max() + 1)).tolist()


def reference_mix(keys, cold, unjudged, share):
    def positions(values):
        order = sorted(range(len(values)), key=lambda i: (not unjudged[i], -values[i], i))
        return {item: place for place, item in enumerate(order)}
    by_cal, by_depth = positions(keys.tolist()), positions(cold.tolist())
    merged = [min(by_cal[i] / (1 - share), by_depth[i] / share) for i in range(len(keys))]
    return merged  # smaller = sooner


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("share", [0.3, 0.5])
def test_cal_mix_interleaves_by_position(seed, share):
    pool, rng = bigger_pool(seed)
    state = labelled_state(pool, rng)
    keys = lib.cal_keys(pool, state)
    mixed = lib.cal_keys(pool, state, depth_share=share)
    merged = reference_mix(keys, lib._cold_start(pool), ~state.judged, share)
    for i in range(pool.num_items):
        for j in range(pool.num_items):
            assert (mixed[i] > mixed[j]) == (merged[i] < merged[j])
    assert sorted(set(mixed.tolist())) == list(range(len(set(mixed.tolist()))))  # dense ranks


def test_hindsight_scores_against_a_reference():
    pool, rng = bigger_pool(3)
    truth = rng.random(pool.num_items) < 0.4
    full = JudgingState(np.ones(pool.num_items, dtype=bool), truth)
    assert lib.hindsight_scores(pool, truth.tolist()).tolist() == \
        pytest.approx(reference_scores(pool, full).tolist(), abs=1e-6)


def test_logit_is_clipped():
    assert float(lib._logit(np.array(0.5))) == 0.0
    high = 1 - 1e-6
    assert float(lib._logit(np.array(1.0))) == pytest.approx(math.log(high) - math.log1p(-high), rel=1e-12)
    assert float(lib._logit(np.array(0.0))) == pytest.approx(math.log(1e-6) - math.log1p(-1e-6), rel=1e-12)
