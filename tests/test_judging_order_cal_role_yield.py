"""cal_order's candidate-role yield (issue 19): the judged items count for a candidate only when they propose it
for the same relation *and* side (group); two items with other (candidate, relation, group) never share a yield,
whatever their numbers. Hand-computed. Django-free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.lib import cal_order as lib
from annotation.lib.judging_pool import JudgingState, PoolView


def logit(p):
    return math.log(p) - math.log1p(-p)


@pytest.mark.parametrize("candidates, groups", [
    ([2, 0], [0, 1]),  # (c 2, r 0, g 0) and (c 0, r 0, g 1): key 2 / 2 + 0 = 0 / 2 + 1 if keys were divided
    ([0, 2], [1, 0]),
    ([1, 0], [0, 1]),
    ([0, 0], [0, 1]),  # same candidate and relation, other side
])
def test_roles_of_other_sides_or_candidates_share_nothing(candidates, groups):
    # item 0 unjudged (question 0), item 1 judged Y (question 1); both questions of relation 0
    pool = PoolView.build(2, [0, 1], [0, 0], [0, 1], [1, 1], num_systems=1, num_questions=2,
                          question_relation=[0, 0], question_group=groups, item_candidate=candidates)
    state = JudgingState.from_labels(2, {1: True})
    got = lib._dynamic(pool, state)
    base = (1 + 1.0) / (1 + 2.0)
    # item 0: its group has no other judged item (the base), its relation has item 1 (Y)
    relation_0 = (1 + lib.SHRINK * base) / (1 + lib.SHRINK)
    # item 1: its own label is left out, so every yield is the prior: the base
    expected = [[logit(relation_0), logit(relation_0), logit(relation_0)], [logit(base)] * 3]
    assert np.allclose(got, expected, rtol=0, atol=1e-12)


def test_the_same_role_shares_its_yield():
    pool = PoolView.build(2, [0, 1], [0, 0], [0, 1], [1, 1], num_systems=1, num_questions=2,
                          question_relation=[0, 0], question_group=[1, 1], item_candidate=[4, 4])
    state = JudgingState.from_labels(2, {1: True})
    got = lib._dynamic(pool, state)
    base = 2 / 3
    group = (1 + lib.SHRINK * base) / (1 + lib.SHRINK)
    relation = (1 + lib.SHRINK * group) / (1 + lib.SHRINK)
    role = (1 + lib.SHRINK * relation) / (1 + lib.SHRINK)
    assert got[0].tolist() == pytest.approx([logit(relation), logit(relation), logit(role)], abs=1e-12)
