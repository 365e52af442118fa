"""judging_pool.PoolView computes its per-item arrays once (issue 19): the judging orders ask for them at every
decision, so item_blocks, item_question and systems_per_item return the same array object after the first call.
Django-free."""
from __future__ import annotations

from annotation.lib.judging_pool import PoolView


def test_per_item_arrays_are_computed_once():
    pool = PoolView.build(3, [0, 2, 2], [0, 0, 1], [1, 0, 1], [2, 1, 3], num_systems=2, num_questions=2)
    question, votes, blocks = pool.item_question, pool.systems_per_item(), pool.item_blocks
    assert question.tolist() == [1, 0, 0] and votes.tolist() == [1, 0, 2]
    assert pool.item_question is question
    assert pool.systems_per_item() is votes
    assert pool.item_blocks is blocks
