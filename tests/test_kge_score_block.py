"""Every model scores entity blocks (issue 18): a block is the columns of the full scores, and a model ranked block by
block through the engine gives the unblocked top-k lists and ranks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tests._torch_support import single_thread  # noqa: F401 - autouse: one torch thread

from pooling.engine.questions import HEAD, TAIL, known_answers, questions_from_triples
from pooling.engine.ranking import rank
from pooling.kge import model_score_fn
from pooling.kge.models import ARCHITECTURES, build_model
from tests.test_kge_models import SMALL
from tests.test_rank_entity_blocks import assert_same

NUM_ENTITIES, NUM_RELATIONS = 300, 5



@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_blocks_are_columns_and_ranking_is_unchanged(name: str) -> None:
    torch.manual_seed(0)
    model = build_model(name, NUM_ENTITIES, NUM_RELATIONS, **SMALL[name]).eval()
    anchor, relation = torch.tensor([0, 7, 299, 42]), torch.tensor([0, 4, 2, 1])
    with torch.no_grad():
        for side in (HEAD, TAIL):
            full = model.score_questions(anchor, relation, side)
            for start, stop in ((0, 300), (0, 64), (64, 128), (256, 300), (17, 93)):
                block = model.score_questions_block(anchor, relation, side, start, stop)
                torch.testing.assert_close(block, full[:, start:stop], rtol=1e-6, atol=1e-6)

    rng = np.random.default_rng(1)
    triples = np.stack([rng.integers(0, NUM_ENTITIES, 400), rng.integers(0, NUM_RELATIONS, 400),
                        rng.integers(0, NUM_ENTITIES, 400)], axis=1)
    questions, answers = questions_from_triples(triples[:60])
    common = dict(num_entities=NUM_ENTITIES, filter=known_answers(questions, triples), targets=answers, k=10)
    unblocked = rank(model_score_fn(model), questions, **common)
    # 64 and 128 do not divide 300 (last block 44 wide). Not narrower: a product with fewer than 16 columns takes
    # another BLAS kernel whose last bits may differ (the engine's automatic blocks are wide and balanced)
    for block in (64, 100, 128):
        assert_same(rank(model_score_fn(model), questions, entity_block=block, **common), unblocked)
