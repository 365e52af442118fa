"""The ranking engine agrees with a brute-force pure-Python reference, ties and filters included."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pooling.engine.questions import HEAD, TAIL, Questions, Ragged
from pooling.engine import ranking
from pooling.engine.ranking import RankingResult, rank, score_fn_from_matrix


def reference(scores: np.ndarray, filter_sets: list[set[int]], targets: list[list[int]], k: int):
    """Straight from the definitions: NaN as -inf, ties by smaller id, a competes in its own ranking."""
    num_entities = scores.shape[1]
    topk_entities, topk_scores, greater, ties, num_candidates = [], [], [], [], []
    for q in range(scores.shape[0]):
        row = [(-math.inf if math.isnan(v) else float(v)) for v in scores[q]]
        candidates = [e for e in range(num_entities) if e not in filter_sets[q]]
        ordered = sorted(candidates, key=lambda e: (-row[e], e))[:k]
        topk_entities.append(ordered + [-1] * (k - len(ordered)))
        topk_scores.append([row[e] for e in ordered] + [math.nan] * (k - len(ordered)))
        for a in targets[q]:
            others = [e for e in candidates if e != a]
            greater.append(sum(row[e] > row[a] for e in others))
            ties.append(sum(row[e] == row[a] for e in others))
            num_candidates.append(len(others) + 1)
    return (
        np.array(topk_entities, dtype=np.int64).reshape(-1, k),
        np.array(topk_scores, dtype=np.float64).reshape(-1, k),
        np.array(greater, dtype=np.int64),
        np.array(ties, dtype=np.int64),
        np.array(num_candidates, dtype=np.int64),
    )


def random_case(
    seed: int, num_questions: int, num_entities: int, integer_scores: bool, with_nan: bool, max_targets: int = 4
):
    rng = np.random.default_rng(seed)
    if integer_scores:  # many exact ties, including at the top-k boundary
        scores = rng.integers(-3, 4, size=(num_questions, num_entities)).astype(np.float32)
    else:
        scores = rng.standard_normal((num_questions, num_entities)).astype(np.float32)
    if with_nan:
        scores[rng.random(scores.shape) < 0.1] = np.nan
        scores[rng.random(scores.shape) < 0.05] = -np.inf
        scores[rng.random(scores.shape) < 0.03] = np.inf
    filter_sets, target_lists = [], []
    for _ in range(num_questions):
        size = int(rng.integers(0, num_entities + 1)) if rng.random() < 0.2 else int(rng.integers(0, 4))
        filter_sets.append(set(rng.choice(num_entities, size=size, replace=False).tolist()))
        num_targets = int(rng.integers(0, max_targets))
        chosen = rng.choice(num_entities, size=num_targets, replace=False).tolist()
        if filter_sets[-1] and rng.random() < 0.5:  # targets inside the filter too
            chosen.append(int(rng.choice(sorted(filter_sets[-1]))))
        target_lists.append(sorted(set(chosen)))
    sides = rng.integers(0, 2, size=num_questions).astype(np.int8)
    questions = Questions(np.arange(num_questions) % num_entities, np.arange(num_questions), sides)
    return scores, questions, filter_sets, target_lists


def row_score_fn(scores: np.ndarray, questions: Questions):
    """A ScoreFn over a matrix whose row for question i is found through its relation/side (unique here)."""
    lookup = {(int(questions.relation[i]), int(questions.side[i])): i for i in range(len(questions))}

    def score(anchor: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        assert side in (HEAD, TAIL)
        rows = [lookup[(int(r), side)] for r in relation]
        return torch.from_numpy(scores[rows].copy())

    return score


def assert_matches(result: RankingResult, expected, k: int) -> None:
    topk_entities, topk_scores, greater, ties, num_candidates = expected
    np.testing.assert_array_equal(result.topk_entities, topk_entities)
    np.testing.assert_array_equal(result.topk_scores.astype(np.float64), topk_scores.astype(np.float32))
    np.testing.assert_array_equal(result.greater, greater)
    np.testing.assert_array_equal(result.ties, ties)
    np.testing.assert_array_equal(result.num_candidates, num_candidates)
    np.testing.assert_array_equal(result.ranks("optimistic"), 1 + greater)
    np.testing.assert_array_equal(result.ranks("pessimistic"), 1 + greater + ties)
    np.testing.assert_array_equal(result.ranks("realistic"), 1 + greater + ties / 2)
    np.testing.assert_array_equal(result.ranks(), result.ranks("realistic"))


@pytest.mark.parametrize("integer_scores", [True, False])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_engine_matches_bruteforce(seed: int, integer_scores: bool, with_nan: bool) -> None:
    num_entities = 13
    scores, questions, filter_sets, target_lists = random_case(seed, 24, num_entities, integer_scores, with_nan)
    k = 5 if seed != 2 else 20  # k larger than the candidate count -> -1 / NaN padding
    expected = reference(scores, filter_sets, target_lists, k)
    filter_ragged = Ragged.from_lists([sorted(s) for s in filter_sets])
    targets = Ragged.from_lists(target_lists)
    results = []
    for batch_size in (1, 3, 7, 1024):
        result = rank(
            row_score_fn(scores, questions),
            questions,
            num_entities=num_entities,
            filter=filter_ragged,
            targets=targets,
            k=k,
            batch_size=batch_size,
        )
        assert_matches(result, expected, k)
        results.append(result)
    matrix_result = rank(
        score_fn_from_matrix(scores), questions, num_entities=num_entities, filter=filter_ragged, targets=targets, k=k
    )
    assert_matches(matrix_result, expected, k)


def test_unsorted_duplicated_filter_and_float64_scores() -> None:
    scores = np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], dtype=np.float64)
    questions = Questions(np.array([0]), np.array([0]), np.array([TAIL]))
    filter_ragged = Ragged.from_lists([[4, 2, 4]])  # unsorted, duplicate entries
    targets = Ragged.from_lists([[2, 3]])
    result = rank(score_fn_from_matrix(scores), questions, num_entities=5, filter=filter_ragged, targets=targets, k=3)
    np.testing.assert_array_equal(result.topk_entities, [[1, 3, 0]])
    # target 2 is filtered but competes in its own ranking: only entity 1 ties with it
    np.testing.assert_array_equal(result.greater, [0, 1])
    np.testing.assert_array_equal(result.ties, [1, 0])
    np.testing.assert_array_equal(result.num_candidates, [4, 3])


@pytest.mark.parametrize("sort_from", [1, 3, ranking._SORT_FROM_TARGETS, 16, 10**9])
@pytest.mark.parametrize("integer_scores", [True, False])
def test_many_targets_per_question(integer_scores: bool, sort_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # leftover targets are counted per row view or, from sort_from targets on, by binary search
    monkeypatch.setattr(ranking, "_SORT_FROM_TARGETS", sort_from)
    num_entities = 60
    scores, questions, filter_sets, target_lists = random_case(
        11, 12, num_entities, integer_scores, with_nan=True, max_targets=45
    )
    expected = reference(scores, filter_sets, target_lists, 7)
    for batch_size in (3, 64):
        result = rank(
            score_fn_from_matrix(scores),
            questions,
            num_entities=num_entities,
            filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
            targets=Ragged.from_lists(target_lists),
            k=7,
            batch_size=batch_size,
        )
        assert_matches(result, expected, 7)
