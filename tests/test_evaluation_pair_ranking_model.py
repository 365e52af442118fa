"""A KGCModel through pooling.kge.protocol_scoring: blocked top pairs and relation scores vs explicit triple
scores computed from the embeddings (DistMult: sum_i h_i r_i t_i)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluation.core.pair_ranking import top_pairs
from evaluation.core.property_prediction import property_ranks
from pooling.kge.models import DistMult, TransE
from pooling.kge.protocol_scoring import block_scorer, relation_scorer

E, R, DIM = 31, 4, 8


@pytest.fixture(scope="module")
def model_and_scores() -> tuple[DistMult, np.ndarray]:
    torch.manual_seed(3)
    model = DistMult(E, R, dim=DIM, dropout=0.5)  # dropout must be off when scoring
    entity = model.entity.weight.detach().double().numpy()
    relation = model.relation.weight.detach().double().numpy()[:R]
    scores = np.einsum("hd,rd,td->rht", entity, relation, entity)  # [R, E, E], independent of score_tails
    return model, scores


def test_top_pairs_of_a_model(model_and_scores) -> None:
    model, scores = model_and_scores
    score_block = block_scorer(model)
    full = np.asarray(score_block(0, np.arange(E)))  # one (E, E) block of the model's float32 scores
    assert full.dtype == np.float32 and np.allclose(full, scores[0], atol=1e-5)
    excluded = {(h, (h * 7) % E) for h in range(E)}
    for relation in range(R):
        # The values the blocked run sees (BLAS may round differently for other block shapes): brute force on them
        own = np.concatenate([np.asarray(score_block(relation, np.arange(first, min(first + 6, E))), np.float64)
                              for first in range(0, E, 6)])
        top = top_pairs(score_block, relation, E, 25, block_size=6, exclude=excluded)
        flat = [(-own[h, t], h, t) for h in range(E) for t in range(E) if (h, t) not in excluded]
        expected = [(h, t) for _, h, t in sorted(flat)[:25]]
        assert top.pairs() == expected
        assert np.allclose(top.scores, [scores[relation, h, t] for h, t in expected], atol=1e-5)


def test_relation_scores_are_the_max_over_tails(model_and_scores) -> None:
    model, scores = model_and_scores
    heads = np.array([0, 5, 30])
    got = relation_scorer(model)(heads)
    assert got.shape == (3, R)
    assert np.allclose(got, scores.max(axis=2).T[heads], atol=1e-5)
    mean = relation_scorer(model, aggregate="mean")(heads)
    assert np.allclose(mean, scores.mean(axis=2).T[heads], atol=1e-5)
    soft = relation_scorer(model, aggregate="logsumexp")(heads)
    assert np.allclose(soft, np.log(np.exp(scores).sum(axis=2)).T[heads], atol=1e-5)
    # a model scored through torch (TransE): the same aggregates from its own score_tails
    distance = TransE(E, R, dim=DIM)
    own = np.stack([distance.eval().score_tails(torch.as_tensor(heads), torch.full((3,), r)).detach().double().numpy()
                    for r in range(R)])  # [R, 3, E]
    assert np.allclose(relation_scorer(distance)(heads), own.max(axis=2).T, atol=1e-5)
    assert np.allclose(relation_scorer(distance, aggregate="logsumexp")(heads),
                       np.log(np.exp(own).sum(axis=2)).T, atol=1e-4)
    ranks = property_ranks(relation_scorer(model), heads, np.array([1, 2, 3]), set(), num_relations=R)
    expected = [1 + (scores.max(axis=2)[:, h] > scores.max(axis=2)[r, h]).sum() for h, r in zip(heads, [1, 2, 3])]
    assert ranks.tolist() == expected


def test_top_pairs_of_a_distance_model() -> None:
    # TransE goes through the model's own torch score_tails: score = -||h + r - t||_1
    torch.manual_seed(4)
    model = TransE(E, R, dim=DIM)
    entity = model.entity.weight.detach().double().numpy()
    relation = model.relation.weight.detach().double().numpy()
    score_block = block_scorer(model)
    for r in (0, 3):
        explicit = -np.abs(entity[:, None, :] + relation[r][None, None, :] - entity[None, :, :]).sum(axis=2)
        own = np.concatenate([score_block(r, np.arange(first, min(first + 8, E))).double().numpy()
                              for first in range(0, E, 8)])
        assert np.allclose(own, explicit, atol=1e-4)
        top = top_pairs(score_block, r, E, 40, block_size=8, exclude={(0, 0), (1, 2)})
        expected = sorted(((-own[h, t], h, t) for h in range(E) for t in range(E) if (h, t) not in {(0, 0), (1, 2)}))
        assert top.pairs() == [(h, t) for _, h, t in expected[:40]]
