"""sampling.py's rules, case by case (issue 19: each rule's mutants): the size bounds and their whole messages,
the largest-remainder allocation worked by hand (ties to the smaller relation id), the seeded draws in relation
order, and the relation KL divergence by hand (a relation missing from the full set gives inf)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from pooling.engine import sampling
from pooling.engine.sampling import relation_kl_divergence, sample_test_indices, stratified_sample_indices
from tests._raises_support import whole


def test_sample_test_indices_bounds_and_type():
    assert sample_test_indices(5, 5, seed=1).tolist() == [0, 1, 2, 3, 4]  # size == num_test is allowed
    empty = sample_test_indices(5, 0, seed=1)  # so is 0
    assert empty.tolist() == [] and empty.dtype == np.int64
    assert sample_test_indices(0, 0, seed=1).tolist() == []
    drawn = sample_test_indices(50, 7, seed=9)
    assert drawn.dtype == np.int64 and drawn.tolist() == sorted(random.Random(9).sample(range(50), 7))
    with pytest.raises(ValueError, match=whole("cannot sample 6 of 5")):
        sample_test_indices(5, 6, seed=1)
    with pytest.raises(ValueError, match=whole("cannot sample -1 of 5")):
        sample_test_indices(5, -1, seed=1)


def draws(relations: list[int], allocation: dict[int, int], seed: int) -> list[int]:
    """The definition: one random.Random(seed), relation after relation (ascending id), ``quota`` members each."""
    rng = random.Random(seed)
    chosen: list[int] = []
    for relation in sorted(set(relations)):
        members = [i for i, r in enumerate(relations) if r == relation]
        chosen.extend(rng.sample(members, allocation.get(relation, 0)))
    return sorted(chosen)


def per_relation(relations: list[int], indices: np.ndarray) -> dict[int, int]:
    counts: dict[int, int] = {}
    for index in indices.tolist():
        counts[relations[index]] = counts.get(relations[index], 0) + 1
    return counts


@pytest.mark.parametrize("relations, size, allocation", [
    # 10 triples, 4 slots: exact 0.4 / 0.8 / 2.8 -> floors 0 / 0 / 2; the 2 slots left go to the larger remainders
    ([2, 5, 5, 9, 9, 9, 9, 9, 9, 9], 4, {2: 0, 5: 1, 9: 3}),
    # 2 / 2 / 6 of 10 -> 4: 0.8 / 0.8 / 2.4, floors 0 / 0 / 2, the 2 slots left to the 0.8 remainders
    ([9, 2, 9, 5, 9, 5, 9, 2, 9, 9], 4, {2: 1, 5: 1, 9: 2}),
    # remainders tied: 0.5 / 1.0 / 1.5 of 6 -> 3, the slot left goes to relation 1, not 7 (smaller id)
    ([7, 7, 7, 3, 3, 1], 3, {1: 1, 3: 1, 7: 1}),
    ([1, 1, 1, 3, 3, 7], 3, {1: 2, 3: 1, 7: 0}),  # 1.5 / 1.0 / 0.5: relation 1 again
    ([4, 4, 4, 4], 4, {4: 4}),  # everything
    ([4, 0, 4, 4], 0, {}),  # nothing
    ([6], 1, {6: 1}),
])
def test_stratified_allocation_by_hand(relations, size, allocation):
    for seed in (0, 1, 2):
        got = stratified_sample_indices(np.array(relations), size, seed=seed)
        assert got.dtype == np.int64
        assert {r: c for r, c in per_relation(relations, got).items() if c} == \
            {r: c for r, c in allocation.items() if c}
        assert got.tolist() == draws(relations, allocation, seed)


def test_stratified_on_relation_counts_1_2_7():
    # relation 0 once, 1 twice, 2 seven times, 4 slots: 0.4 / 0.8 / 2.8 -> {0: 0, 1: 1, 2: 3}
    relations = [2, 2, 1, 2, 2, 0, 2, 1, 2, 2]
    got = stratified_sample_indices(relations, 4, seed=5)  # a plain list is taken too
    assert per_relation(relations, got) == {1: 1, 2: 3}
    assert got.tolist() == draws(relations, {0: 0, 1: 1, 2: 3}, 5)


def test_stratified_bounds_and_messages():
    assert stratified_sample_indices(np.array([], dtype=np.int64), 0, seed=0).tolist() == []
    with pytest.raises(ValueError, match=whole("cannot sample 4 of 3")):
        stratified_sample_indices(np.array([0, 1, 1]), 4, seed=0)
    with pytest.raises(ValueError, match=whole("cannot sample -1 of 3")):
        stratified_sample_indices(np.array([0, 1, 1]), -1, seed=0)
    with pytest.raises(ValueError, match=whole("cannot sample 1 of 0")):
        stratified_sample_indices(np.array([], dtype=np.int64), 1, seed=0)


def test_relation_kl_by_hand():
    # sample p = (2/3, 1/3, 0), full q = (1/4, 1/2, 1/4)
    expected = 2 / 3 * math.log((2 / 3) / (1 / 4)) + 1 / 3 * math.log((1 / 3) / (1 / 2))
    got = relation_kl_divergence(np.array([0, 1, 0]), np.array([2, 1, 0, 1]))
    assert type(got) is float and got == pytest.approx(expected, rel=1e-12)
    # the full set's largest id sets the size just as well as the sample's
    assert relation_kl_divergence([3], [3, 0]) == pytest.approx(math.log(2), rel=1e-12)
    assert relation_kl_divergence([1, 1], [1]) == 0.0


def test_relation_kl_infinite_and_empty():
    assert relation_kl_divergence(np.array([0, 4]), np.array([0, 1])) == math.inf  # 4 is not in the full set
    assert relation_kl_divergence(np.array([1]), np.array([0])) == math.inf
    message = whole("both relation lists must be non-empty")
    with pytest.raises(ValueError, match=message):
        relation_kl_divergence(np.array([], dtype=np.int64), np.array([0]))
    with pytest.raises(ValueError, match=message):
        relation_kl_divergence(np.array([0]), np.array([], dtype=np.int64))


def test_public_names():
    assert sampling.__all__ == ["sample_test_indices", "stratified_sample_indices", "relation_kl_divergence"]
