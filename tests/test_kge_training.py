"""1-N training: targets, overfitting a tiny graph with every architecture, seeds, early stopping."""
from __future__ import annotations

import numpy as np
import pytest

import torch  # noqa: E402
from tests._torch_support import single_thread  # noqa: F401 - autouse: one torch thread
from pooling.kge import training  # noqa: E402
from pooling.kge.evaluation import filtered_mrr  # noqa: E402
from pooling.kge.models import ARCHITECTURES  # noqa: E402
from pooling.kge.training import EpochReport, TrainingConfig, TrainingQuestions, train  # noqa: E402

NUM_ENTITIES, NUM_RELATIONS = 10, 3
# A tiny graph with 1-1, 1-N and N-1 patterns: the models must memorise it.
TINY = np.array([
    [0, 0, 1], [1, 0, 2], [2, 0, 3], [3, 0, 4], [4, 0, 5],
    [5, 1, 6], [5, 1, 7], [8, 1, 9], [6, 1, 9],
    [9, 2, 0], [7, 2, 0], [3, 2, 8], [2, 2, 1], [1, 2, 4],
], dtype=np.int64)

OVERFIT = {  # small, dropout-free models and a high learning rate: memorise in ~100 full-batch steps
    "transe": {"dim": 32},
    "rotate": {"dim": 16},
    "distmult": {"dim": 32, "dropout": 0.0},
    "complex": {"dim": 16, "dropout": 0.0},
    "rescal": {"dim": 16, "dropout": 0.0},
    "conve": {"dim": 32, "embedding_height": 4, "channels": 8, "input_dropout": 0.0,
              "feature_dropout": 0.0, "hidden_dropout": 0.0},
    "tucker": {"entity_dim": 16, "relation_dim": 8, "input_dropout": 0.0, "hidden_dropout1": 0.0,
               "hidden_dropout2": 0.0},
}


def tiny_config(architecture: str, **overrides) -> TrainingConfig:
    settings = dict(hyperparameters=OVERFIT[architecture], epochs=150, batch_size=64, lr=0.02, seed=3,
                    eval_every=1000, patience=0, label_smoothing=0.0, device="cpu")
    settings.update(overrides)
    return TrainingConfig(architecture=architecture, **settings)


def test_training_questions_merge_identical_questions_and_use_reciprocals() -> None:
    triples = np.array([[0, 0, 1], [0, 0, 2], [0, 0, 1], [3, 1, 2]])
    questions = TrainingQuestions.from_triples(triples, num_relations=2)
    found = {(int(a), int(r)): questions.answers[questions.offsets[i]:questions.offsets[i + 1]].tolist()
             for i, (a, r) in enumerate(zip(questions.anchor, questions.relation))}
    # tail questions (h, r); head questions (t, r + R) with the heads as answers; duplicates merged
    assert found == {(0, 0): [1, 2], (3, 1): [2], (1, 2): [0], (2, 2): [0], (2, 3): [3]}


def test_targets_are_normalised_multi_hot_with_label_smoothing() -> None:
    questions = TrainingQuestions.from_triples(np.array([[0, 0, 1], [0, 0, 2], [3, 1, 2]]), num_relations=2)
    batch = torch.arange(len(questions))
    targets = questions.target_matrix(batch, num_entities=5, label_smoothing=0.0)
    torch.testing.assert_close(targets.sum(1), torch.ones(len(questions)))
    first = questions.answers[: questions.offsets[1]].tolist()
    assert targets[0, first].tolist() == [1.0 / len(first)] * len(first)
    smoothed = questions.target_matrix(batch, num_entities=5, label_smoothing=0.1)
    torch.testing.assert_close(smoothed.sum(1), torch.ones(len(questions)))
    assert smoothed.min().item() == pytest.approx(0.1 / 5)


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
def test_every_architecture_memorises_a_tiny_graph(architecture: str) -> None:
    result = train(tiny_config(architecture), TINY, None, NUM_ENTITIES, NUM_RELATIONS, progress=False)
    assert result.epochs_run == 150 and result.best_valid_mrr is None
    assert result.history[-1]["loss"] < result.history[0]["loss"]
    # Filtered MRR on the training triples themselves (both sides): the answers come (nearly) first.
    assert filtered_mrr(result.model, TINY, TINY) > 0.9


def _weights(model) -> dict[str, torch.Tensor]:
    return {name: tensor.clone() for name, tensor in model.state_dict().items()}


def test_same_seed_gives_identical_weights() -> None:
    # DistMult with dropout and label smoothing exercises every random draw (init, shuffle, dropout).
    config = tiny_config("distmult", hyperparameters={"dim": 16, "dropout": 0.3}, epochs=5, batch_size=4,
                         label_smoothing=0.1)
    first = _weights(train(config, TINY, None, NUM_ENTITIES, NUM_RELATIONS, progress=False).model)
    second = _weights(train(config, TINY, None, NUM_ENTITIES, NUM_RELATIONS, progress=False).model)
    assert all(torch.equal(first[name], second[name]) for name in first)
    config.seed += 1
    third = _weights(train(config, TINY, None, NUM_ENTITIES, NUM_RELATIONS, progress=False).model)
    assert not torch.equal(first["entity.weight"], third["entity.weight"])


def test_early_stopping_stops_after_patience_and_restores_the_best_epoch(monkeypatch) -> None:
    # Script the validation MRR so the best epoch is known: best at epoch 2, then two worse evaluations.
    scripted = iter([0.1, 0.5, 0.3, 0.2, 0.9, 0.9])
    snapshots: dict[int, dict[str, torch.Tensor]] = {}

    def fake_filtered_mrr(model, triples, filter_triples, *, batch_size):
        snapshots[len(snapshots) + 1] = _weights(model)
        return next(scripted)

    monkeypatch.setattr(training, "filtered_mrr", fake_filtered_mrr)
    reports: list[EpochReport] = []
    config = tiny_config("distmult", epochs=20, eval_every=1, patience=2)
    result = train(config, TINY, TINY[:3], NUM_ENTITIES, NUM_RELATIONS, progress=reports.append)

    assert result.epochs_run == 4 and len(result.history) == 4 and len(reports) == 4
    assert result.best_epoch == 2 and result.best_valid_mrr == 0.5
    assert [entry["valid_mrr"] for entry in result.history] == [0.1, 0.5, 0.3, 0.2]
    assert reports[-1].best_epoch == 2 and reports[-1].best_valid_mrr == 0.5
    final = _weights(result.model)
    assert all(torch.equal(final[name], snapshots[2][name]) for name in final)
    assert not torch.equal(final["entity.weight"], snapshots[4]["entity.weight"])
    assert not result.model.training


def test_validation_mrr_is_real_and_evaluated_every_n_epochs() -> None:
    valid = TINY[::4]
    config = tiny_config("complex", epochs=60, eval_every=20, patience=0)
    result = train(config, TINY, valid, NUM_ENTITIES, NUM_RELATIONS, progress=False)
    evaluated = [entry["epoch"] for entry in result.history if entry["valid_mrr"] is not None]
    assert evaluated == [20, 40, 60]
    # valid triples are also training triples here, so the memorised model ranks them first
    assert result.best_valid_mrr == pytest.approx(filtered_mrr(result.model, valid, TINY)) and result.best_valid_mrr > 0.9


def test_config_defaults_and_serialisation() -> None:
    config = TrainingConfig.for_architecture("ConvE", seed=7, hyperparameters={"dim": 100})
    assert config.architecture == "conve" and config.seed == 7
    assert config.lr == ARCHITECTURES["conve"].TRAINING_DEFAULTS["lr"]
    assert TrainingConfig.from_dict(config.to_dict()) == config
    assert training.resolve_device("cpu").type == "cpu"
    assert training.resolve_device(None).type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_num_threads_applies_during_training_only() -> None:
    torch.set_num_threads(2)
    seen: list[int] = []
    config = tiny_config("distmult", epochs=2, num_threads=1)
    train(config, TINY, None, NUM_ENTITIES, NUM_RELATIONS, progress=lambda report: seen.append(torch.get_num_threads()))
    assert seen == [1, 1] and torch.get_num_threads() == 2


def test_out_of_range_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="valid_triples"):
        train(tiny_config("distmult", epochs=1), TINY, np.array([[0, 5, 1]]), NUM_ENTITIES, NUM_RELATIONS,
              progress=False)
    with pytest.raises(ValueError, match="train_triples"):
        train(tiny_config("distmult", epochs=1), TINY, None, NUM_ENTITIES - 1, NUM_RELATIONS, progress=False)
