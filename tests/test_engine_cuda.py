"""The GPU path: ranking, scoring and training on CUDA give what the CPU path gives.

Skipped where no CUDA device is present (CI here has none); run on a GPU host with
``python -m pytest tests/test_engine_cuda.py`` (these tests import no Django).
"""
from __future__ import annotations

import numpy as np
import pytest

import torch  # noqa: E402
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

from pooling.engine import ranking  # noqa: E402
from pooling.engine.kgfiles import read_kg  # noqa: E402
from pooling.engine.questions import HEAD, TAIL, Ragged, known_answers, questions_from_triples  # noqa: E402
from pooling.engine.ranking import rank, score_fn_from_matrix  # noqa: E402
from pooling.kge.models import ARCHITECTURES, build_model  # noqa: E402
from pooling.kge.evaluation import filtered_mrr  # noqa: E402
from pooling.kge.training import TrainingConfig, train  # noqa: E402
from tests.test_rank_bruteforce import assert_matches, random_case, reference, row_score_fn  # noqa: E402


def on_device(score_fn, device: str):
    """The same ScoreFn answering with tensors on ``device`` (as a model living on the GPU would)."""
    return lambda anchor, relation, side: score_fn(anchor.cpu(), relation.cpu(), side).to(device)


@pytest.mark.parametrize("integer_scores", [True, False])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_cuda_engine_matches_bruteforce(seed: int, integer_scores: bool, with_nan: bool) -> None:
    num_entities = 13
    scores, questions, filter_sets, target_lists = random_case(seed, 24, num_entities, integer_scores, with_nan)
    k = 5 if seed != 2 else 20
    expected = reference(scores, filter_sets, target_lists, k)
    filter_ragged = Ragged.from_lists([sorted(s) for s in filter_sets])
    targets = Ragged.from_lists(target_lists)
    for batch_size in (1, 7, 1024):
        result = rank(on_device(row_score_fn(scores, questions), "cuda"), questions, num_entities=num_entities,
                      filter=filter_ragged, targets=targets, k=k, batch_size=batch_size, device="cuda")
        assert_matches(result, expected, k)
    # CPU score matrix, engine on the GPU: rows are moved per batch
    result = rank(score_fn_from_matrix(scores), questions, num_entities=num_entities, filter=filter_ragged,
                  targets=targets, k=k, device="cuda")
    assert_matches(result, expected, k)


@pytest.mark.parametrize("sort_from", [1, 10**9])
def test_cuda_many_targets_per_question(sort_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "_SORT_FROM_TARGETS", sort_from)
    scores, questions, filter_sets, target_lists = random_case(11, 12, 60, True, with_nan=True, max_targets=45)
    expected = reference(scores, filter_sets, target_lists, 7)
    result = rank(score_fn_from_matrix(scores), questions, num_entities=60,
                  filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=7, batch_size=5, device="cuda")
    assert_matches(result, expected, 7)


def nations(shared_data) -> tuple[dict[str, np.ndarray], int, int]:
    data = read_kg(shared_data / "nations")
    return data.splits, len(data.entity_keys), len(data.relation_keys)


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_model_on_cuda_scores_and_ranks_as_on_cpu(name: str, shared_data) -> None:
    splits, num_entities, num_relations = nations(shared_data)
    torch.manual_seed(0)
    cpu_model = build_model(name, num_entities, num_relations).eval()
    gpu_model = build_model(name, num_entities, num_relations).eval()
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.to("cuda")
    questions, answers = questions_from_triples(splits["test"])
    filter_sets = known_answers(questions, splits["train"], splits["valid"], splits["test"])
    with torch.no_grad():
        for side in (HEAD, TAIL):
            anchor = torch.arange(num_entities)
            relation = torch.arange(num_entities) % num_relations
            cpu = cpu_model.score_questions(anchor, relation, side)
            gpu = gpu_model.score_questions(anchor.cuda(), relation.cuda(), side)
            assert gpu.device.type == "cuda"
            # TF32 may be used for GPU matmuls: agree to a relative 1e-2 of the score scale
            torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-2, atol=1e-2 * float(cpu.abs().max()))
        cpu_result = rank(cpu_model.score_questions, questions, num_entities=num_entities, filter=filter_sets,
                          targets=answers, k=5)
        gpu_result = rank(gpu_model.score_questions, questions, num_entities=num_entities, filter=filter_sets,
                          targets=answers, k=5, device="cuda")
    # the same ranks up to the rare pair of near-tied scores that float rounding orders differently
    cpu_rr, gpu_rr = 1 / cpu_result.ranks(), 1 / gpu_result.ranks()
    assert abs(cpu_rr.mean() - gpu_rr.mean()) < 1e-3
    assert np.mean(cpu_result.ranks() == gpu_result.ranks()) > 0.95


def test_training_on_cuda_learns(shared_data) -> None:
    splits, num_entities, num_relations = nations(shared_data)
    config = TrainingConfig.for_architecture("distmult", epochs=40, eval_every=20, patience=0, device="cuda",
                                             hyperparameters={"dim": 32}, seed=3)
    result = train(config, splits["train"], splits["valid"], num_entities, num_relations, progress=False,
                   known_triples=splits["test"])
    assert next(result.model.parameters()).device.type == "cuda"
    known = np.concatenate([splits["train"], splits["valid"], splits["test"]])
    test_mrr = filtered_mrr(result.model, splits["test"], known, batch_size=256)
    untrained = build_model("distmult", num_entities, num_relations, dim=32).eval()
    # Nations has 14 entities: a random model's filtered MRR is about 0.3; a trained one is well above
    assert test_mrr > filtered_mrr(untrained, splits["test"], known, batch_size=256) + 0.15
    assert result.best_valid_mrr is not None and result.best_valid_mrr > 0.5
