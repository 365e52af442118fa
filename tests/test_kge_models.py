"""KGC models: shapes, the reciprocal convention and each score against its textbook formula."""
from __future__ import annotations

import pytest

import torch  # noqa: E402
from tests._torch_support import single_thread  # noqa: F401 - autouse: one torch thread
from pooling.engine.questions import HEAD, TAIL  # noqa: E402
from pooling.kge.models import ARCHITECTURES, KGCModel, architecture_class, build_model  # noqa: E402

NUM_ENTITIES, NUM_RELATIONS = 13, 4
SMALL = {  # small sizes keep the tests fast; ConvE needs dim divisible by embedding_height
    "transe": {"dim": 8},
    "rotate": {"dim": 8},
    "distmult": {"dim": 8},
    "complex": {"dim": 8},
    "rescal": {"dim": 6},
    "conve": {"dim": 16, "embedding_height": 4, "channels": 4},
    "tucker": {"entity_dim": 8, "relation_dim": 5},
}


def small_model(name: str) -> KGCModel:
    torch.manual_seed(0)
    return build_model(name, NUM_ENTITIES, NUM_RELATIONS, **SMALL[name]).eval()


def test_registry_holds_the_seven_architectures() -> None:
    assert set(ARCHITECTURES) == {"transe", "rotate", "distmult", "complex", "rescal", "conve", "tucker"}
    assert architecture_class("ConvE") is ARCHITECTURES["conve"]
    with pytest.raises(ValueError, match="unknown architecture"):
        build_model("hole", 3, 1)


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
@pytest.mark.parametrize("side", [HEAD, TAIL])
def test_scores_every_entity_for_a_batch_of_questions(name: str, side: int) -> None:
    model = small_model(name)
    anchor = torch.tensor([0, 5, 12])
    relation = torch.tensor([0, 3, 1])
    scores = model.score_questions(anchor, relation, side)
    assert scores.shape == (3, NUM_ENTITIES)
    assert scores.dtype == torch.float32
    assert torch.isfinite(scores).all()
    # Each row depends only on its own question (batching does not mix questions).
    single = model.score_questions(anchor[1:2], relation[1:2], side)
    torch.testing.assert_close(single[0], scores[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_head_questions_use_the_reciprocal_relation(name: str) -> None:
    model = small_model(name)
    assert model.num_relation_embeddings == 2 * NUM_RELATIONS
    anchor, relation = torch.tensor([2, 7]), torch.tensor([1, 3])
    torch.testing.assert_close(model.score_questions(anchor, relation, HEAD),
                               model.score_tails(anchor, relation + NUM_RELATIONS))
    torch.testing.assert_close(model.score_questions(anchor, relation, TAIL), model.score_tails(anchor, relation))
    # Head and tail questions are genuinely different (own parameters per direction).
    assert not torch.allclose(model.score_questions(anchor, relation, HEAD),
                              model.score_questions(anchor, relation, TAIL))
    with pytest.raises(ValueError):
        model.score_questions(anchor, relation, 2)


def _all_pairs(model: KGCModel) -> tuple[torch.Tensor, torch.Tensor]:
    anchor = torch.tensor([0, 4, 9])
    relation = torch.tensor([1, 6, 3])  # internal relation ids, reciprocals included
    return anchor, relation


def test_translational_scores_match_their_formulas() -> None:
    for p in (1, 2):
        torch.manual_seed(0)
        transe = build_model("transe", NUM_ENTITIES, NUM_RELATIONS, dim=8, p=p).eval()
        anchor, relation = _all_pairs(transe)
        h, r, t = transe.entity(anchor), transe.relation(relation), transe.entity.weight
        expected = -(h[:, None, :] + r[:, None, :] - t[None, :, :]).norm(p=p, dim=-1)
        torch.testing.assert_close(transe.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-4)

    rotate = small_model("rotate")
    dim = rotate.dim
    h = torch.complex(*rotate.entity(anchor).split(dim, dim=-1))
    t = torch.complex(*rotate.entity.weight.split(dim, dim=-1))
    r = torch.polar(torch.ones(3, dim), rotate.phase(relation))
    difference = (h * r)[:, None, :] - t[None, :, :]
    expected = -torch.sqrt((difference.abs() ** 2).sum(-1))
    torch.testing.assert_close(rotate.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-4)


def test_bilinear_scores_match_their_formulas() -> None:
    distmult = small_model("distmult")
    anchor, relation = _all_pairs(distmult)
    expected = torch.einsum("bd,bd,ed->be", distmult.entity(anchor), distmult.relation(relation),
                            distmult.entity.weight)
    torch.testing.assert_close(distmult.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-5)

    complex_model = small_model("complex")
    dim = SMALL["complex"]["dim"]
    h = torch.complex(*complex_model.entity(anchor).split(dim, dim=-1))
    r = torch.complex(*complex_model.relation(relation).split(dim, dim=-1))
    t = torch.complex(*complex_model.entity.weight.split(dim, dim=-1))
    expected = torch.einsum("bd,bd,ed->be", h, r, t.conj()).real
    torch.testing.assert_close(complex_model.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-5)

    rescal = small_model("rescal")
    dim = SMALL["rescal"]["dim"]
    matrices = rescal.relation(relation).view(-1, dim, dim)
    expected = torch.einsum("bi,bij,ej->be", rescal.entity(anchor), matrices, rescal.entity.weight)
    torch.testing.assert_close(rescal.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-5)


def test_tucker_matches_the_core_tensor_product_in_eval_mode() -> None:
    tucker = small_model("tucker")
    anchor, relation = _all_pairs(tucker)
    head = tucker.input_norm(tucker.entity(anchor))
    hidden = torch.einsum("kij,bk,bi->bj", tucker.core, tucker.relation(relation), head)
    expected = tucker.hidden_norm(hidden) @ tucker.entity.weight.t()
    torch.testing.assert_close(tucker.score_tails(anchor, relation), expected, rtol=1e-4, atol=1e-4)


def test_hyperparameters_are_recorded_and_validated() -> None:
    model = build_model("transe", 5, 2, dim=4, p=1)
    assert model.hparams == {"dim": 4, "p": 1, "dropout": 0.3}
    assert architecture_class("transe").TRAINING_DEFAULTS["lr"] > 0
    with pytest.raises(ValueError):
        build_model("transe", 5, 2, p=3)
    with pytest.raises(ValueError):
        build_model("conve", 5, 2, dim=30, embedding_height=7)
    with pytest.raises(ValueError, match="kernel"):
        build_model("conve", 5, 2, dim=7)  # prime: a 2 x 7 image cannot take a 3 x 3 kernel
    # ConvE picks its image shape from dim, as in the paper (200 -> 20 x 10), and records it.
    for dim, height in ((200, 20), (100, 10), (16, 4), (96, 12)):
        conve = build_model("conve", 5, 2, dim=dim)
        assert conve.hparams["embedding_height"] == height
        assert conve.eval().score_questions(torch.tensor([0, 1]), torch.tensor([1, 0]), HEAD).shape == (2, 5)
    with pytest.raises(TypeError):
        build_model("distmult", 5, 2, dimension=4)  # misspelt hyperparameters fail loudly


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_candidate_scores_are_the_columns_of_the_all_entity_scores(name: str) -> None:
    # Negative sampling scores only some entities: the same numbers as the (B, E) matrix, without building it.
    model = small_model(name)
    anchor, relation = torch.tensor([0, 5, 12]), torch.tensor([0, 7, 1])
    every = model.score_tails(anchor, relation)
    query = model.tail_query(anchor, relation)
    shared = torch.tensor([11, 2, 2, 7])
    torch.testing.assert_close(model.score_query(query, shared), every[:, shared], rtol=1e-4, atol=1e-4)
    per_row = torch.tensor([[3], [0], [12]])
    torch.testing.assert_close(model.score_query(query, per_row), every.gather(1, per_row), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(model.score_query(query, slice(4, 9)), every[:, 4:9], rtol=1e-4, atol=1e-4)
