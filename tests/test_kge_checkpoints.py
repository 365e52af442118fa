"""Checkpoints round-trip (weights, batch-norm statistics, config, metrics) and load weights-only."""
from __future__ import annotations

import numpy as np
import pytest

import torch  # noqa: E402
from tests._torch_support import single_thread  # noqa: F401 - autouse: one torch thread

from pooling.engine.questions import HEAD, TAIL  # noqa: E402
from pooling.kge.checkpoints import load_checkpoint, save_checkpoint  # noqa: E402
from pooling.kge.training import TrainingConfig, train  # noqa: E402

TRIPLES = np.array([[0, 0, 1], [1, 0, 2], [2, 1, 3], [3, 1, 0], [4, 0, 5], [5, 1, 4]], dtype=np.int64)



@pytest.mark.parametrize("architecture, hyperparameters", [
    ("conve", {"dim": 16, "embedding_height": 4, "channels": 4}),  # batch-norm buffers must survive
    ("rotate", {"dim": 8}),
])
def test_round_trip_gives_the_same_scores(tmp_path, architecture: str, hyperparameters: dict) -> None:
    config = TrainingConfig(architecture=architecture, hyperparameters=hyperparameters, epochs=3, batch_size=4,
                            device="cpu")
    model = train(config, TRIPLES, None, 6, 2, progress=False).model
    metrics = {"valid_mrr": 0.5, "per_side": {"head": 0.4, "tail": 0.6}, "epochs": 3}
    path = save_checkpoint(tmp_path / "nested" / "model.pt", model, config, metrics)

    payload = torch.load(path, weights_only=True)  # loadable without unpickling code
    assert payload["config"]["architecture"] == architecture

    loaded, loaded_config, loaded_metrics = load_checkpoint(path, device="cpu")
    assert type(loaded) is type(model) and not loaded.training
    assert loaded_config == config and loaded_metrics == metrics
    anchor, relation = torch.arange(6), torch.tensor([0, 1, 0, 1, 0, 1])
    for side in (HEAD, TAIL):
        with torch.no_grad():
            torch.testing.assert_close(loaded.score_questions(anchor, relation, side),
                                       model.eval().score_questions(anchor, relation, side), rtol=0, atol=0)


def test_rebuilds_from_stored_hyperparameters_not_current_defaults(tmp_path) -> None:
    config = TrainingConfig(architecture="distmult", hyperparameters={"dim": 7}, epochs=1, device="cpu")
    model = train(config, TRIPLES, None, 6, 2, progress=False).model
    path = save_checkpoint(tmp_path / "m.pt", model, {**config.to_dict(), "hyperparameters": {}}, None)
    loaded, loaded_config, metrics = load_checkpoint(path)
    assert loaded.entity.weight.shape == (6, 7) and loaded_config.hyperparameters == {} and metrics == {}


def test_rejects_non_json_metrics(tmp_path) -> None:
    config = TrainingConfig(architecture="transe", hyperparameters={"dim": 4}, epochs=1, device="cpu")
    model = train(config, TRIPLES, None, 6, 2, progress=False).model
    with pytest.raises(TypeError):
        save_checkpoint(tmp_path / "m.pt", model, config, {"array": np.zeros(2)})
    assert not (tmp_path / "m.pt").exists()
