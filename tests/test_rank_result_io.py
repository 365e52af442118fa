"""RankingResult round-trips through one .npz without pickle; progress is reported per batch."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pooling.engine.questions import Questions, Ragged
from pooling.engine.ranking import RankingResult, rank


def test_save_load_roundtrip_and_progress(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    embeddings = torch.from_numpy(rng.standard_normal((30, 4)).astype(np.float32))

    def score(anchor: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        return (embeddings[anchor] * (relation[:, None] + 1)) @ embeddings.T

    questions = Questions(np.arange(10), np.arange(10) % 3, np.arange(10) % 2)
    calls: list[tuple[int, int]] = []
    result = rank(
        score,
        questions,
        num_entities=30,
        filter=Ragged.from_lists([[i] for i in range(10)]),
        targets=Ragged.from_lists([[i, (i + 1) % 30] for i in range(10)]),
        k=4,
        batch_size=3,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls[-1] == (10, 10) and len(calls) == 4  # 5 questions per side, 2 batches per side
    path = tmp_path / "run.npz"
    result.save(path)
    loaded = RankingResult.load(path)
    for name in ("topk_entities", "topk_scores", "greater", "ties", "num_candidates"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(result, name))
    assert loaded.targets == result.targets
    np.testing.assert_array_equal(loaded.ranks("pessimistic"), result.ranks("pessimistic"))
