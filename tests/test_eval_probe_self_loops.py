"""PROBE popularity counts a self-loop train triple (a, r, a) twice, as the PROBE authors' code does (SPEC 5.4).

The reference is a direct transcription of the authors' counting: every train triple adds one occurrence for its
head and one for its tail, to d(a) and to the (relation, a) count, so (a, r, a) adds 2 to both. Counting a
self-loop once moved PROBE on WN18RR at beta > 0 away from the authors' values (up to 2.2e-5).
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from evaluation.core.probe import BETA_GRID, TrainPopularity, probe_beta_grid, probe_score


def _authors_counts(triples: list[tuple[int, int, int]]) -> tuple[Counter[int], Counter[tuple[int, int]]]:
    degree: Counter[int] = Counter()
    pair: Counter[tuple[int, int]] = Counter()
    for h, r, t in triples:
        for a in (h, t):  # head slot and tail slot: a self-loop contains a twice
            degree[a] += 1
            pair[(r, a)] += 1
    return degree, pair


def _brute_force_probe(answers, relations, ranks, num_candidates, triples, alpha: float, beta: float) -> float:
    """PROBE of SPEC 5.4 written out with loops over the authors' counts."""
    degree, pair = _authors_counts(triples)
    total = 2 * len(triples)
    entity = [degree[a] / total for a in answers]
    relation = [pair[(r, a)] / degree[a] if degree[a] else 0.0 for a, r in zip(answers, relations)]
    eps_e = min(x for x in entity if x > 0)
    eps_r = min(x for x in relation if x > 0)
    numerator = denominator = 0.0
    for e, p, rank, n in zip(entity, relation, ranks, num_candidates):
        weight = (eps_e + e) ** -beta * (eps_r + p) ** -beta
        transformed = (rank ** -alpha - n ** -alpha) / (1 - n ** -alpha)
        numerator += weight * transformed
        denominator += weight
    return numerator / denominator


# Tiny KG, |T| = 4, two self-loops: (0,0,0) (0,1,1) (1,0,2) (2,0,2)
# d(0) = 2 + 1 = 3, d(1) = 1 + 1 = 2, d(2) = 1 + 2 = 3; sum 8 = 2|T|: delta = 3/8, 1/4, 3/8
# (r, a) counts: (0,0) 2, (1,0) 1, (1,1) 1, (0,1) 1, (0,2) 3
# delta(0|0) = 2/3, delta(1|0) = 1/3, delta(1|1) = 1/2, delta(0|1) = 1/2, delta(0|2) = 1, delta(1|2) = 0
TINY = [(0, 0, 0), (0, 1, 1), (1, 0, 2), (2, 0, 2)]


def test_tiny_kg_with_self_loops_hand_counts() -> None:
    popularity = TrainPopularity.from_triples(np.array(TINY))
    assert popularity.entity_delta(np.array([0, 1, 2])) == pytest.approx([3 / 8, 1 / 4, 3 / 8], rel=1e-15)
    entities, relations = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 0, 0, 1])
    assert popularity.relation_given_entity(entities, relations) == pytest.approx(
        [2 / 3, 1 / 3, 1 / 2, 1 / 2, 1.0, 0.0], rel=1e-15)
    degree, pair = _authors_counts(TINY)
    assert popularity.entity_delta(np.array([0, 1, 2])).tolist() == [degree[a] / 8 for a in (0, 1, 2)]


def test_tiny_kg_probe_hand_value() -> None:
    # Queries (answer, relation, rank, N), alpha = 1: (0, 0, 1, 5) f* = 1; (1, 1, 5, 5) f* = 0;
    # (2, 0, 2, 3) f* = (1/2 - 1/3) / (2/3) = 1/4.  Deltas: (3/8, 2/3), (1/4, 1/2), (3/8, 1); eps_e = 1/4, eps_r = 1/2
    # beta = 1: w = [8/5 * 6/7, 2 * 1, 8/5 * 2/3] = [48/35, 2, 16/15]
    # PROBE = (48/35 + 16/15 / 4) / (48/35 + 2 + 16/15) = (172/105) / (466/105) = 86/233
    answers, relations = np.array([0, 1, 2]), np.array([0, 1, 0])
    ranks, candidates = np.array([1.0, 5.0, 2.0]), np.array([5, 5, 3])
    entity_delta, relation_delta = TrainPopularity.from_triples(np.array(TINY)).query_deltas(answers, relations)
    score = probe_score(ranks, candidates, entity_delta, relation_delta, alpha=1.0, beta=1.0)
    assert score == pytest.approx(86 / 233, rel=1e-14)
    assert score == pytest.approx(_brute_force_probe(answers.tolist(), relations.tolist(), ranks.tolist(),
                                                     candidates.tolist(), TINY, 1.0, 1.0), rel=1e-14)


@pytest.fixture(scope="module")
def wn18rr(shared_data):
    def read(name: str) -> list[list[str]]:
        text = (shared_data / "wn18rr" / name).read_text(encoding="utf-8")
        return [line.split("\t") for line in text.split("\n") if line.strip()]

    train, test = read("train.txt"), read("test.txt")
    entity_ids = {name: i for i, name in enumerate(sorted({x for h, _, t in train + test for x in (h, t)}))}
    relation_ids = {name: i for i, name in enumerate(sorted({r for _, r, _ in train + test}))}
    encode = lambda rows: [(entity_ids[h], relation_ids[r], entity_ids[t]) for h, r, t in rows]  # noqa: E731
    return encode(train), encode(test), len(entity_ids)


def test_wn18rr_popularity_counts_self_loops_twice(wn18rr) -> None:
    train, _, num_entities = wn18rr
    self_loops = [(h, r, t) for h, r, t in train if h == t]
    assert len(train) == 86_835 and len(self_loops) == 7  # all `_derivationally_related_form`
    degree, pair = _authors_counts(train)
    popularity = TrainPopularity.from_triples(np.array(train), num_entities)
    every_entity = np.arange(num_entities)
    expected_entity = np.array([degree[a] for a in range(num_entities)]) / (2 * len(train))
    np.testing.assert_allclose(popularity.entity_delta(every_entity), expected_entity, rtol=1e-15, atol=0)
    assert popularity.entity_delta(every_entity).sum() == pytest.approx(1.0, abs=1e-12)
    pairs = sorted(pair)
    relations, entities = np.array(pairs).T
    expected_pair = np.array([pair[p] / degree[p[1]] for p in pairs])
    np.testing.assert_allclose(popularity.relation_given_entity(entities, relations), expected_pair,
                               rtol=1e-15, atol=0)
    for h, r, _ in self_loops:  # the self-loop adds 2 to d(a) and to the (r, a) count
        assert popularity.entity_delta(np.array([h]))[0] * 2 * len(train) == degree[h]
        assert degree[h] >= 2 and pair[(r, h)] >= 2


def test_wn18rr_probe_beta_grid_matches_the_authors_counting(wn18rr) -> None:
    train, test, num_entities = wn18rr
    # both sides of every test triple: answer the head of a head question, the tail of a tail question
    answers = [h for h, _, _ in test] + [t for _, _, t in test]
    relations = [r for _, r, _ in test] * 2
    rng = np.random.default_rng(14)
    num_candidates = rng.integers(num_entities // 2, num_entities, len(answers))
    ranks = np.floor(num_candidates * rng.random(len(answers)) ** 4) + 1  # mostly good ranks, some ties (x.5)
    ranks[::7] += 0.5 * (ranks[::7] < num_candidates[::7])
    entity_delta, relation_delta = TrainPopularity.from_triples(np.array(train), num_entities).query_deltas(
        np.array(answers), np.array(relations))
    got = probe_beta_grid(ranks, num_candidates, entity_delta, relation_delta, BETA_GRID, alpha=1.0)
    expected = [_brute_force_probe(answers, relations, ranks.tolist(), num_candidates.tolist(), train, 1.0, beta)
                for beta in BETA_GRID]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
