"""categories.py's rules, case by case (issue 19: each rule's mutants): distinct_rows on both of its paths (one
int64 key, or a lexsort when the key would not fit or an id is negative) against sorted sets, the threshold
met exactly, the default threshold, an empty train split, and the whole message."""
from __future__ import annotations

import numpy as np
import pytest

from pooling.engine import categories as categories_module
from pooling.engine.categories import CATEGORIES, distinct_rows, mean_distinct_per_key, relation_categories
from tests._raises_support import whole
from tests._spy_support import count_calls


def brute_rows(*columns) -> list[tuple[int, ...]]:
    return sorted(set(zip(*[np.asarray(column).tolist() for column in columns])))


def rows_of(decoded) -> list[tuple[int, ...]]:
    return list(zip(*[column.tolist() for column in decoded]))


@pytest.fixture
def lexsorts(monkeypatch):
    return count_calls(monkeypatch, categories_module.np, "lexsort")


def test_distinct_rows_on_one_key(lexsorts):
    a, b, c = [2, 0, 2, 0, 1, 2], [1, 0, 1, 0, 5, 0], [0, 3, 0, 3, 0, 0]
    got = distinct_rows(np.array(a), np.array(b), np.array(c))
    assert rows_of(got) == brute_rows(a, b, c) == [(0, 0, 3), (1, 5, 0), (2, 0, 0), (2, 1, 0)]
    assert all(column.dtype == np.int64 for column in got)
    assert rows_of(distinct_rows(np.array([0, 0]), np.array([0, 0]))) == [(0, 0)]
    assert rows_of(distinct_rows(np.array([3]))) == [(3,)]
    empty = distinct_rows(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert [column.tolist() for column in empty] == [[], []]
    assert lexsorts == []  # ids >= 0 (0 included) and a key far below 2^62


@pytest.mark.parametrize("case", ["negative", "too large"])
def test_distinct_rows_on_a_lexsort(lexsorts, case):
    rng = np.random.default_rng(2)
    a, b = rng.integers(-3, 3, 60), rng.integers(0, 4, 60)
    if case == "too large":  # 2^31 * 2^31 = 2^62: no longer one key
        a, b = a + 3 + (2**31 - 6), b + (2**31 - 4)
    got = distinct_rows(a, b)
    assert rows_of(got) == brute_rows(a, b) and len(lexsorts) == 1
    assert rows_of(distinct_rows(np.array([-1, -1]), np.array([0, 0]))) == [(-1, 0)]
    assert rows_of(distinct_rows(np.array([0, -1]), np.array([5, 5]))) == [(-1, 5), (0, 5)]  # last column alike


def test_distinct_rows_just_below_the_key_limit(lexsorts):
    a, b = np.array([2**31 - 1, 0, 2**31 - 1]), np.array([2**31 - 2, 0, 2**31 - 2])  # 2^31 * (2^31 - 1) < 2^62
    assert rows_of(distinct_rows(a, b)) == [(0, 0), (2**31 - 1, 2**31 - 2)] and lexsorts == []


def test_mean_distinct_per_key_by_hand():
    # relation 0: key 1 -> {5, 6}, key 2 -> {5}; relation 2: key 0 -> {1}; relation 1 and 3: nothing
    relation, key, value = np.array([0, 0, 0, 0, 2]), np.array([1, 1, 2, 1, 0]), np.array([5, 6, 5, 5, 1])
    np.testing.assert_array_equal(mean_distinct_per_key(relation, key, value, 4), [1.5, 0.0, 1.0, 0.0])


def test_the_threshold_is_met_exactly_and_defaults_to_one_and_a_half():
    # relation 0: tph = (2 + 1) / 2 = 1.5, hpt 1; relation 1: hpt 1.5, tph 1; relation 2: both 1.5
    triples = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 4],
                        [1, 1, 0], [2, 1, 0], [4, 1, 3],
                        [0, 2, 0], [0, 2, 1], [2, 2, 1]])
    categories, tph, hpt = relation_categories(triples, num_relations=3)
    assert categories.tolist() == ["1-N", "N-1", "N-N"] and categories.dtype == np.dtype("<U3")
    np.testing.assert_array_equal(tph, [1.5, 1.0, 1.5])
    np.testing.assert_array_equal(hpt, [1.0, 1.5, 1.5])
    assert relation_categories(triples, 3, threshold=1.6)[0].tolist() == ["1-1"] * 3
    assert relation_categories(triples, 3, threshold=1.0)[0].tolist() == ["N-N"] * 3
    assert CATEGORIES == ("1-1", "1-N", "N-1", "N-N")


def test_an_empty_train_split_and_relation_ids_out_of_range():
    categories, tph, hpt = relation_categories(np.zeros((0, 3), dtype=np.int64), num_relations=2)
    assert categories.tolist() == ["1-1", "1-1"] and tph.tolist() == hpt.tolist() == [0.0, 0.0]
    assert relation_categories([[0, 1, 1]], num_relations=2)[0].tolist() == ["1-1", "1-1"]
    for relation in (2, 3):
        with pytest.raises(ValueError, match=whole("relation id >= num_relations")):
            relation_categories([[0, relation, 1]], num_relations=2)


def test_the_public_names_exist():
    assert categories_module.__all__ == ["CATEGORIES", "distinct_rows", "relation_categories",
                                         "mean_distinct_per_key"]
    assert all(hasattr(categories_module, name) for name in categories_module.__all__)
