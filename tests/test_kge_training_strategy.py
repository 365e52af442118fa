"""TrainingConfig.strategy: "auto" picks 1-N or negative sampling by entities x questions; stored in checkpoints."""
from __future__ import annotations

import numpy as np
import pytest

from pooling.kge import training  # noqa: E402
from pooling.kge.checkpoints import load_checkpoint, save_checkpoint  # noqa: E402
from pooling.kge.training import TrainingConfig, chosen_strategy, distinct_questions  # noqa: E402

TRIPLES = np.array([[0, 0, 1], [0, 0, 2], [3, 1, 1], [1, 0, 0], [2, 1, 1], [0, 0, 1]], dtype=np.int64)


def test_distinct_questions_counts_head_and_tail_questions_once() -> None:
    brute_force = {(h, r, "tail") for h, r, _ in TRIPLES.tolist()} | {(t, r, "head") for _, r, t in TRIPLES.tolist()}
    assert distinct_questions(TRIPLES, 2) == len(brute_force) == 8


def test_auto_uses_one_to_n_up_to_the_limit_and_negative_sampling_above(monkeypatch) -> None:
    config = TrainingConfig(architecture="distmult")
    assert config.strategy == "auto"
    # FB15k-237 (14,541 entities x 149,689 questions = 2.2e9) and WN18RR (4.2e9) stay 1-N with the shipped limit
    assert 40_943 * 103_509 <= training.ONE_N_LIMIT
    monkeypatch.setattr(training, "ONE_N_LIMIT", 4 * 8)  # 4 entities x 8 questions
    assert chosen_strategy(config, TRIPLES, 4, 2) == "1-n"
    assert chosen_strategy(config, TRIPLES, 5, 2) == "negative-sampling"
    assert chosen_strategy(TrainingConfig(architecture="distmult", strategy="1-n"), TRIPLES, 5, 2) == "1-n"

    seen: list[str] = []
    monkeypatch.setattr(training, "train_negative_sampling", lambda *args, **kwargs: seen.append("sampled"))
    training.train(TrainingConfig(architecture="distmult", epochs=1), TRIPLES, None, 5, 2, progress=False)
    assert seen == ["sampled"]
    result = training.train(TrainingConfig(architecture="distmult", epochs=1, device="cpu"), TRIPLES, None, 4, 2,
                            progress=False)
    assert seen == ["sampled"] and result.epochs_run == 1


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError, match="strategy"):
        TrainingConfig(architecture="distmult", strategy="1-vs-all")


def test_strategy_is_stored_in_checkpoints_and_old_configs_read_as_one_to_n(tmp_path) -> None:
    old = TrainingConfig(architecture="transe").to_dict()
    del old["strategy"], old["negatives"], old["valid_sample"]  # a config saved before strategies existed
    assert TrainingConfig.from_dict(old).strategy == "1-n"
    config = TrainingConfig(architecture="distmult", hyperparameters={"dim": 4}, epochs=1, device="cpu",
                            strategy="negative-sampling", negatives=3)
    model = training.train(config, TRIPLES, None, 4, 2, progress=False).model
    _, loaded, _ = load_checkpoint(save_checkpoint(tmp_path / "m.pt", model, config), device="cpu")
    assert loaded == config and loaded.strategy == "negative-sampling" and loaded.negatives == 3
