"""ranking.py's rules, case by case (issue 19: each rule's mutants): every refusal's whole message, hand-computed
top-k lists and ranks (ties at the top-k boundary, filtered targets, NaN and -inf scores), the paths the engine
picks for speed (the exact top-k only for ambiguous rows, the vectorised compares, the sorted-row binary search,
entity blocks) counted through spies, and the batch order (one side per call, HEAD first)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from pooling.engine import ranking
from pooling.engine.questions import HEAD, TAIL, Questions, Ragged
from pooling.engine.ranking import MatrixScores, RankingResult, SparseScores, rank, score_fn_from_matrix
from tests._raises_support import whole
from tests._spy_support import count_calls
from tests.test_rank_bruteforce import assert_matches, random_case, reference


def tail_questions(count: int) -> Questions:
    return Questions(np.arange(count), np.arange(count), np.full(count, TAIL))


def rank_matrix(scores, filter_lists, target_lists=None, k=3, **options) -> RankingResult:
    scores = np.asarray(scores, dtype=np.float32)
    targets = None if target_lists is None else Ragged.from_lists(target_lists)
    return rank(score_fn_from_matrix(scores), tail_questions(scores.shape[0]), num_entities=scores.shape[1],
                filter=Ragged.from_lists(filter_lists), targets=targets, k=k, **options)


# ---------------------------------------------------------------------------------------------------- by hand


def test_a_hand_case_with_ties_a_filtered_target_and_nan():
    # candidates 0, 1, 3, 4, 5 (2 is filtered); NaN reads as -inf
    result = rank_matrix([[3, 5, 5, 1, 5, np.nan]], [[2]], [[0, 2, 4, 5]], k=2)
    np.testing.assert_array_equal(result.topk_entities, [[1, 4]])
    np.testing.assert_array_equal(result.topk_scores, [[5, 5]])
    # 0 (3): 1 and 4 above; 2 (5, filtered, competes in its own ranking): ties 1 and 4; 4 (5): ties 1;
    # 5 (-inf): 0, 1, 3, 4 above
    np.testing.assert_array_equal(result.greater, [2, 0, 0, 4])
    np.testing.assert_array_equal(result.ties, [0, 2, 1, 0])
    np.testing.assert_array_equal(result.num_candidates, [5, 6, 5, 5])
    np.testing.assert_array_equal(result.ranks(), [3.0, 2.0, 1.5, 5.0])
    np.testing.assert_array_equal(result.ranks("optimistic"), [3.0, 1.0, 1.0, 5.0])
    np.testing.assert_array_equal(result.ranks("pessimistic"), [3.0, 3.0, 2.0, 5.0])
    assert result.ranks().dtype == np.float64 and result.k == 2
    np.testing.assert_array_equal(result.target_questions(), [0, 0, 0, 0])


def test_minus_inf_targets_tie_with_the_other_minus_inf_candidates_only():
    # 1 and 3 at -inf, 0 filtered at -inf too (a filtered entry is never counted)
    result = rank_matrix([[-np.inf, -np.inf, 2, -np.inf]], [[0]], [[0, 1]], k=4)
    np.testing.assert_array_equal(result.topk_entities, [[2, 1, 3, -1]])
    np.testing.assert_array_equal(result.topk_scores, [[2, -np.inf, -np.inf, np.nan]])
    np.testing.assert_array_equal(result.greater, [1, 1])
    np.testing.assert_array_equal(result.ties, [2, 1])  # 0 (filtered, own ranking) ties 1 and 3; 1 ties 3
    np.testing.assert_array_equal(result.num_candidates, [4, 3])


def test_k_of_one_and_batch_size_of_one():
    result = rank_matrix([[1, 4, 4], [2, 0, 2]], [[], [0]], [[2], [2]], k=1, batch_size=1)
    np.testing.assert_array_equal(result.topk_entities, [[1], [2]])
    np.testing.assert_array_equal(result.greater, [0, 0])
    np.testing.assert_array_equal(result.ties, [1, 0])


def test_sorted_filter_with_duplicates_counts_each_entity_once():
    # [2, 4, 4] is sorted but not strictly increasing: it must be deduplicated (2 entities filtered, not 3)
    result = rank_matrix([[0, 1, 2, 3, 4]], [[2, 4, 4]], [[0, 4]], k=2)
    np.testing.assert_array_equal(result.num_candidates, [3, 4])
    np.testing.assert_array_equal(result.topk_entities, [[3, 1]])
    np.testing.assert_array_equal(result.greater, [2, 0])
    # already strictly increasing rows are used as they are (the same result)
    same = rank_matrix([[0, 1, 2, 3, 4]], [[2, 4]], [[0, 4]], k=2)
    np.testing.assert_array_equal(same.num_candidates, [3, 4])


def test_filters_used_as_they_are_only_when_each_row_strictly_increases(monkeypatch):
    rebuilt = count_calls(monkeypatch, ranking.Ragged, "from_pairs")
    scores = [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]]
    result = rank_matrix(scores, [[3], [1, 2]], [[0], [0]], k=2)  # rows increase (not across them): as they are
    assert rebuilt == []
    np.testing.assert_array_equal(result.num_candidates, [4, 3])
    result = rank_matrix(scores, [[1, 3], [2, 2, 4]], [[0], [0]], k=2)  # a duplicate in the second row
    assert len(rebuilt) == 1
    np.testing.assert_array_equal(result.num_candidates, [3, 3])
    np.testing.assert_array_equal(result.topk_entities, [[4, 2], [0, 1]])
    result = rank_matrix(scores, [[1, 3], [4, 2]], [[0], [0]], k=2)  # decreasing in the second row
    assert len(rebuilt) == 2
    np.testing.assert_array_equal(result.num_candidates, [3, 3])


def test_filter_entities_at_both_ends_are_valid():
    result = rank_matrix([[5, 1, 2, 9]], [[0, 3]], [[0, 3]], k=2)
    np.testing.assert_array_equal(result.topk_entities, [[2, 1]])
    np.testing.assert_array_equal(result.greater, [0, 0])
    np.testing.assert_array_equal(result.num_candidates, [3, 3])


def test_no_targets_gives_empty_rank_arrays():
    result = rank_matrix([[1, 2]], [[]], None, k=1)
    assert result.targets == Ragged.empty(1)
    for array in (result.greater, result.ties, result.num_candidates):
        assert array.dtype == np.int64 and array.size == 0
    assert result.topk_entities.dtype == np.int64 and result.topk_scores.dtype == np.float32


# ---------------------------------------------------------------------------------------------------- refusals


def test_refusals_and_their_whole_messages():
    scores = np.zeros((2, 5), dtype=np.float32)
    questions = tail_questions(2)
    fine = dict(num_entities=5, filter=Ragged.empty(2))
    with pytest.raises(ValueError, match=whole("k must be >= 1")):
        rank(score_fn_from_matrix(scores), questions, k=0, **fine)
    with pytest.raises(ValueError, match=whole("batch_size must be >= 1")):
        rank(score_fn_from_matrix(scores), questions, batch_size=0, **fine)
    with pytest.raises(ValueError, match=whole("entity_block must be >= 1")):
        rank(score_fn_from_matrix(scores), questions, entity_block=0, **fine)
    with pytest.raises(ValueError, match=whole("filter has 1 rows, expected one per question (2)")):
        rank(score_fn_from_matrix(scores), questions, num_entities=5, filter=Ragged.empty(1))
    for bad in (-1, 5):
        with pytest.raises(ValueError, match=whole("filter contains entity ids outside 0..4")):
            rank(score_fn_from_matrix(scores), questions, num_entities=5, filter=Ragged.from_lists([[bad], []]))
        with pytest.raises(ValueError, match=whole("targets contain entity ids outside 0..4")):
            rank(score_fn_from_matrix(scores), questions, targets=Ragged.from_lists([[], [0, bad]]), **fine)
    with pytest.raises(ValueError, match=whole("targets has 3 rows, expected 2")):
        rank(score_fn_from_matrix(scores), questions, targets=Ragged.empty(3), **fine)
    with pytest.raises(ValueError, match=whole("score matrix needs one row per question")):
        rank(score_fn_from_matrix(scores[:1]), questions, **fine)
    sparse = SparseScores(np.array([0, 1]), np.array([2]), np.array([1.0]), 5)
    with pytest.raises(ValueError, match=whole("sparse scores need one row per question")):
        rank(sparse, questions, **fine)

    def plain(anchor, relation, side):
        return torch.zeros((anchor.numel(), 5))

    with pytest.raises(TypeError, match=whole("entity blocks need a MatrixScores or a score function with a "
                                              "score_block method")):
        rank(plain, questions, entity_block=2, **fine)

    def short(anchor, relation, side):
        return torch.zeros((anchor.numel(), 4))

    with pytest.raises(ValueError, match=whole("score function returned (2, 4), expected (2, 5)")):
        rank(short, questions, **fine)
    with pytest.raises(ValueError, match=whole("unknown tie policy 'average'")):
        rank(score_fn_from_matrix(scores), questions, **fine).ranks("average")


def test_score_functions_of_other_dtypes():
    # integer and half-precision scores are ranked as float32 (an integer tensor cannot hold the -inf mask)
    scores = np.array([[3, 1, 3, 2], [0, 0, 7, 0]])
    expected = rank_matrix(scores, [[1], []], [[0, 1], [3]], k=3)
    for dtype in (torch.int64, torch.float16, torch.bfloat16):
        def score(anchor, relation, side, dtype=dtype):
            return torch.from_numpy(scores[anchor.numpy()]).to(dtype)

        result = rank(score, tail_questions(2), num_entities=4, filter=Ragged.from_lists([[1], []]),
                      targets=Ragged.from_lists([[0, 1], [3]]), k=3)
        for name, array in expected.to_arrays().items():
            np.testing.assert_array_equal(result.to_arrays()[name], array, err_msg=name)
        np.testing.assert_array_equal(result.topk_entities, [[0, 2, 3], [2, 0, 1]])
        np.testing.assert_array_equal(result.greater, [0, 3, 1])
        np.testing.assert_array_equal(result.ties, [1, 0, 2])


# ---------------------------------------------------------------------------------------------------- speed paths


@pytest.fixture
def exact_rows(monkeypatch):
    """The number of rows handed to _exact_topk, per call."""
    seen: list[int] = []
    original = ranking._exact_topk

    def spy(scores, candidate, kth_value, k):
        seen.append(int(scores.shape[0]))
        return original(scores, candidate, kth_value, k)

    monkeypatch.setattr(ranking, "_exact_topk", spy)
    return seen


def test_exact_topk_only_for_rows_tied_at_the_boundary(exact_rows):
    scores = [[4, 3, 2, 1, 0],  # clear: the 2nd (3) is above the 3rd (2)
              [4, 3, 3, 1, 0],  # tied at the boundary
              [9, 8, 7, 6, 5]]  # clear
    result = rank_matrix(scores, [[], [], []], k=2)
    np.testing.assert_array_equal(result.topk_entities, [[0, 1], [0, 1], [0, 1]])
    assert exact_rows == [1]


def test_exact_topk_not_needed_when_k_covers_every_entity(exact_rows):
    result = rank_matrix([[1, 1, 1], [2, 0, 2]], [[], []], k=3)  # no k+1-th place to tie with
    np.testing.assert_array_equal(result.topk_entities, [[0, 1, 2], [0, 2, 1]])
    assert exact_rows == []
    result = rank_matrix([[1, 1, 1]], [[]], k=5)  # fewer entities than k: padded, still clear
    np.testing.assert_array_equal(result.topk_entities, [[0, 1, 2, -1, -1]])
    np.testing.assert_array_equal(result.topk_scores, [[1, 1, 1, np.nan, np.nan]])
    assert exact_rows == []


def test_minus_inf_at_the_boundary_is_always_resolved(exact_rows):
    # the k-th value is -inf: filtered entries (-inf) may sit among the candidates there
    result = rank_matrix([[-np.inf, 5, -np.inf, -np.inf]], [[0]], k=2)
    np.testing.assert_array_equal(result.topk_entities, [[1, 2]])
    assert exact_rows == [1]
    exact_rows.clear()
    result = rank_matrix([[1, 5, -np.inf, 0]], [[2]], k=3)  # k-th value 0, the k+1-th -inf: clear
    np.testing.assert_array_equal(result.topk_entities, [[1, 0, 3]])
    assert exact_rows == []


def test_one_top_k_pass_unless_a_nan_is_met(monkeypatch):
    calls = count_calls(monkeypatch, ranking, "_topk")
    rank_matrix([[1, 2, 3], [3, 2, 1]], [[0], []], [[1], [2]], k=2)
    assert len(calls) == 1  # one batch, no NaN
    rank_matrix([[1, np.nan, 3], [3, 2, 1]], [[0], []], [[1], [2]], k=2)  # a target scored NaN: sanitised first
    assert len(calls) == 2
    result = rank_matrix([[1, np.nan, 3], [3, 2, 1]], [[0], []], [[0], [2]], k=2)  # a candidate: a second pass
    assert len(calls) == 4
    np.testing.assert_array_equal(result.topk_entities, [[2, 1], [0, 1]])
    np.testing.assert_array_equal(result.greater, [1, 2])


def test_exact_topk_by_hand():
    scores = torch.tensor([[2.0, 5.0, 2.0, 2.0, 7.0], [1.0, 1.0, -math.inf, -math.inf, -math.inf]])
    candidate = torch.tensor([[True, True, False, True, True], [True, False, True, True, False]])
    values, entities = ranking._exact_topk(scores, candidate, torch.tensor([2.0, -math.inf]), 4)
    np.testing.assert_array_equal(entities.numpy(), [[4, 1, 0, 3], [0, 2, 3, -1]])
    np.testing.assert_array_equal(values.numpy(), [[7, 5, 2, 2], [1, -np.inf, -np.inf, np.nan]])
    values, entities = ranking._exact_topk(scores, candidate, torch.tensor([2.0, -math.inf]), 3)
    np.testing.assert_array_equal(entities.numpy(), [[4, 1, 0], [0, 2, 3]])


@pytest.fixture
def greater_calls(monkeypatch):
    return count_calls(monkeypatch, ranking.np, "greater")


@pytest.fixture
def sort_calls(monkeypatch):
    return count_calls(monkeypatch, ranking.np, "sort")


@pytest.mark.parametrize("num_rows, vectorised", [(3, True), (4, False)])
def test_one_compare_over_the_batch_while_a_third_of_its_rows_have_a_target(greater_calls, num_rows, vectorised):
    # one target among 3 rows (1 * 3 >= 3): one whole-batch compare; among 4 rows (3 < 4): a row view instead
    scores = np.arange(num_rows * 5, dtype=np.float32).reshape(num_rows, 5) % 4
    filters = [[]] * num_rows
    targets = [[3]] + [[]] * (num_rows - 1)
    result = rank_matrix(scores, filters, targets, k=2)
    assert len(greater_calls) == (1 if vectorised else 0)
    assert_matches(result, reference(scores, [set()] * num_rows, targets, 2), 2)


def test_sorted_row_from_eight_targets_on(sort_calls, greater_calls):
    scores = np.array([[0, 3, 3, 1, 2, 2, 2, 5, 4, 1], [1, 1, 1, 1, 1, 0, 0, 0, 0, 9]], dtype=np.float32)
    eight = [[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6]]  # 8 targets: sorted; 7: compared
    result = rank_matrix(scores, [[9], []], eight, k=2)
    assert len(sort_calls) == 1 and len(greater_calls) == 7  # row 1 fills its 7 slots, row 0 has none
    assert_matches(result, reference(scores, [{9}, set()], eight, 2), 2)
    sort_calls.clear()
    seven = [[0, 1, 2, 3, 4, 5, 6], []]
    result = rank_matrix(scores, [[9], []], seven, k=2)
    assert sort_calls == []
    assert_matches(result, reference(scores, [{9}, set()], seven, 2), 2)


def test_count_cpu_with_nan_entries_by_hand():
    # NaN is never above nor equal to a threshold, on both paths (a sorted row and row views)
    matrix = np.array([[1, np.nan, 3, 3, np.nan, 0, 2, 2, 1, 3]], dtype=np.float32)
    thresholds = np.array([0, 1, 2, 3, 4, np.inf, -np.inf, np.nan], dtype=np.float32)
    expected_greater = [7, 5, 3, 0, 0, 0, 8, 0]
    expected_equal = [1, 2, 2, 3, 0, 0, 0, 0]
    for count in (8, 3):
        rows = np.zeros(count, dtype=np.int64)
        greater, equal = ranking._count_cpu(matrix, rows, thresholds[:count])
        assert greater.tolist() == expected_greater[:count] and equal.tolist() == expected_equal[:count]
        assert greater.dtype == np.int64 and equal.dtype == np.int64


@pytest.mark.parametrize("num_rows, rows, calls", [
    # (np.greater: whole-batch compares, np.count_nonzero: row-view counts, np.flatnonzero, np.sort)
    (4, [0, 0], (0, 4, 2, 0)),  # slot 0 has 1 target of 4 rows: stop there, both on row views
    (3, [0], (1, 0, 2, 0)),  # 1 target of 3 rows: one whole-batch compare
    (2, [0, 0, 1], (2, 0, 3, 0)),  # slot 0 (2 targets), slot 1 (1 target): a compare each
    (2, [0] * 8 + [1], (1, 1, 3, 1)),  # 8 targets: their row sorted once (one NaN count); the other compared
    (2, [0] * 7 + [1], (7, 0, 8, 0)),
])
def test_count_cpu_paths(monkeypatch, num_rows, rows, calls):
    rng = np.random.default_rng(len(rows))
    matrix = rng.integers(0, 4, size=(num_rows, 9)).astype(np.float32)
    rows = np.array(rows, dtype=np.int64)
    thresholds = rng.integers(-1, 5, size=rows.size).astype(np.float32)
    spies = [count_calls(monkeypatch, ranking.np, name) for name in ("greater", "count_nonzero", "flatnonzero",
                                                                     "sort")]
    greater, equal = ranking._count_cpu(matrix, rows, thresholds)
    assert tuple(len(spy) for spy in spies) == calls
    assert greater.tolist() == [int((matrix[r] > t).sum()) for r, t in zip(rows, thresholds)]
    assert equal.tolist() == [int((matrix[r] == t).sum()) for r, t in zip(rows, thresholds)]


def test_cpu_tensors_are_counted_with_numpy(monkeypatch):
    # (the torch path, for other devices, is checked against the brute force by test_engine_cuda.py on a GPU)
    calls = count_calls(monkeypatch, ranking, "_count_cpu")
    result = rank_matrix([[1, 2, 2], [3, 0, 1]], [[], [0]], [[1], [2]], k=1)
    assert len(calls) == 1
    np.testing.assert_array_equal(result.greater, [0, 0])
    np.testing.assert_array_equal(result.ties, [1, 0])


def test_count_greater_equal_on_the_cpu_by_hand():
    scores = torch.tensor([[1.0, 2.0, 2.0], [0.0, 0.0, 5.0]])
    greater, equal = ranking._count_greater_equal(scores, torch.tensor([0, 0, 1]), torch.tensor([1.0, 2.0, 0.0]), 2)
    assert greater.tolist() == [2, 0, 1] and equal.tolist() == [1, 2, 2]


# ---------------------------------------------------------------------------------------------------- batches


def test_batches_one_side_each_head_first_in_batch_size_chunks():
    sides = np.array([TAIL, HEAD, HEAD, TAIL, HEAD, HEAD, HEAD])
    chunks = ranking._batches(sides, 2)
    assert [chunk.tolist() for chunk in chunks] == [[1, 2], [4, 5], [6], [0, 3]]
    assert [chunk.tolist() for chunk in ranking._batches(sides, 10)] == [[1, 2, 4, 5, 6], [0, 3]]
    assert ranking._batches(np.array([], dtype=np.int8), 3) == []


def test_progress_and_calls_follow_the_batches():
    rng = np.random.default_rng(4)
    scores = rng.standard_normal((5, 6)).astype(np.float32)
    questions = Questions(np.arange(5), np.arange(5), np.array([TAIL, HEAD, HEAD, HEAD, TAIL]))
    calls: list[tuple[int, list[int]]] = []

    def score(anchor, relation, side):
        calls.append((side, relation.tolist()))
        return torch.from_numpy(scores[relation.numpy()])

    progress: list[tuple[int, int]] = []
    result = rank(score, questions, num_entities=6, filter=Ragged.empty(5), k=2, batch_size=2,
                  progress=lambda done, total: progress.append((done, total)))
    assert calls == [(HEAD, [1, 2]), (HEAD, [3]), (TAIL, [0, 4])]
    assert progress == [(2, 5), (3, 5), (5, 5)]
    np.testing.assert_array_equal(result.topk_entities, np.argsort(-scores, axis=1, kind="stable")[:, :2])


def test_csr_slice_by_hand():
    sets = Ragged.from_lists([[4, 6], [], [1, 2, 3], [0]])
    rows, values, positions = ranking._csr_slice(sets, np.array([2, 0, 1, 3]))
    assert rows.tolist() == [0, 0, 0, 1, 1, 3]
    assert values.tolist() == [1, 2, 3, 4, 6, 0]
    assert positions.tolist() == [2, 3, 4, 0, 1, 5]


def test_membership_by_hand():
    sets = Ragged.from_lists([[1, 3], [], [0]])
    targets = Ragged.from_lists([[3, 0, 1], [1], [0, 2]])
    assert ranking._membership(targets, sets, 4).tolist() == [True, False, True, False, True, False]
    assert ranking._membership(targets, Ragged.empty(3), 4).tolist() == [False] * 6


# ---------------------------------------------------------------------------------------------------- random


@pytest.mark.parametrize("seed", range(4))
def test_many_small_cases_against_the_reference(seed):
    num_entities = 6
    scores, questions, filter_sets, target_lists = random_case(100 + seed, 9, num_entities, seed % 2 == 0,
                                                               seed >= 2, max_targets=6)
    for k in (1, 2, 6, 7):
        expected = reference(scores, filter_sets, target_lists, k)
        result = rank(score_fn_from_matrix(scores), questions, num_entities=num_entities,
                      filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                      targets=Ragged.from_lists(target_lists), k=k, batch_size=4)
        assert_matches(result, expected, k)


def test_matrix_scores_of_integers_are_float32():
    assert MatrixScores(np.array([[1, 2]])).matrix.dtype == torch.float32
    assert MatrixScores(np.array([[1, 2]], dtype=np.float64)).matrix.dtype == torch.float64


# ---------------------------------------------------------------------------------------------------- score sources


def test_matrix_scores_rows_blocks_and_values():
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    scores = MatrixScores(matrix)
    assert scores.num_entities == 4 and scores.questions is None
    index = torch.tensor([2, 0])
    np.testing.assert_array_equal(scores.rows(index, torch.device("cpu")).numpy(), matrix[[2, 0]])
    np.testing.assert_array_equal(scores.rows(index, torch.device("cpu"), 1, 3).numpy(), matrix[[2, 0], 1:3])
    np.testing.assert_array_equal(scores.rows(index, torch.device("cpu"), 2).numpy(), matrix[[2, 0], 2:])
    np.testing.assert_array_equal(scores.rows(index, torch.device("cpu"), 0, 9).numpy(), matrix[[2, 0]])
    fresh = scores.rows(index, torch.device("cpu"))
    fresh[:] = -1  # the engine writes into what it gets
    np.testing.assert_array_equal(scores.matrix.numpy(), matrix)
    np.testing.assert_array_equal(scores.values_at(np.array([1, 2, 0]), np.array([3, 0, 0])).numpy(), [7, 8, 0])
    with pytest.raises(ValueError, match=whole("score matrix must be 2-d (Q, E), got shape (4,)")):
        MatrixScores(np.zeros(4))
    with pytest.raises(ValueError, match=whole("score matrix must be 2-d (Q, E), got shape (1, 2, 2)")):
        MatrixScores(np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match=whole("score matrix needs one row per question")):
        MatrixScores(matrix, tail_questions(2))
    with pytest.raises(TypeError, match=whole("MatrixScores without questions can only be used through rank() by "
                                              "question index")):
        scores(torch.tensor([0]), torch.tensor([0]), TAIL)


def test_matrix_scores_find_rows_by_question_key():
    # anchors beyond the matrix's columns and relation ids that would collide with a narrower key
    questions = Questions(np.array([5, 0, 0, 1, 5]), np.array([0, 1, 0, 0, 1]),
                          np.array([TAIL, TAIL, HEAD, TAIL, HEAD]))
    matrix = np.arange(20, dtype=np.float32).reshape(5, 4)
    scores = MatrixScores(matrix, questions)
    got = scores(torch.tensor([0, 5, 1]), torch.tensor([1, 0, 0]), TAIL)
    np.testing.assert_array_equal(got.numpy(), matrix[[1, 0, 3]])
    np.testing.assert_array_equal(scores(torch.tensor([5, 0]), torch.tensor([1, 0]), HEAD).numpy(), matrix[[4, 2]])
    np.testing.assert_array_equal(scores.score_block(torch.tensor([5]), torch.tensor([1]), HEAD, 1, 3).numpy(),
                                  matrix[[4], 1:3])
    for anchor, relation, side in ((1, 1, TAIL), (9, 1, HEAD), (0, 0, TAIL), (1, 0, HEAD)):
        with pytest.raises(KeyError) as caught:
            scores(torch.tensor([anchor]), torch.tensor([relation]), side)
        assert caught.value.args == ("question not in the score matrix",)
    empty = MatrixScores(np.zeros((0, 3), dtype=np.float32), Questions(np.zeros(0), np.zeros(0), np.zeros(0)))
    with pytest.raises(KeyError):
        empty(torch.tensor([0]), torch.tensor([0]), HEAD)
    # rank() through keys (any order) gives what rank() by row index gives
    common = dict(num_entities=4, filter=Ragged.from_lists([[0], [], [3], [1, 2], []]),
                  targets=Ragged.from_lists([[0, 1], [2], [], [3], [0]]), k=2)
    by_key = rank(scores, questions, **common)
    by_row = rank(MatrixScores(matrix), questions, **common)
    for name, array in by_row.to_arrays().items():
        np.testing.assert_array_equal(by_key.to_arrays()[name], array, err_msg=name)


def test_sparse_scores_blocks_values_and_fill():
    # row 0: entities 1 and 3; row 1: none; row 2: entity 0
    sparse = SparseScores(np.array([0, 2, 2, 3]), np.array([1, 3, 0]), np.array([5, 7, 9]), 4)
    assert sparse.values.dtype == np.float32 and sparse.dtype == torch.float32 and sparse.num_entities == 4
    assert sparse.questions is None and sparse.fill == -math.inf
    cpu = torch.device("cpu")
    np.testing.assert_array_equal(sparse.rows(torch.tensor([2, 0, 1]), cpu).numpy(),
                                  [[9, -np.inf, -np.inf, -np.inf], [-np.inf, 5, -np.inf, 7], [-np.inf] * 4])
    np.testing.assert_array_equal(sparse.rows(torch.tensor([0, 2]), cpu, 1, 3).numpy(),
                                  [[5, -np.inf], [-np.inf, -np.inf]])
    np.testing.assert_array_equal(sparse.rows(torch.tensor([0]), cpu, 3).numpy(), [[7]])
    np.testing.assert_array_equal(sparse.values_at(np.array([0, 0, 2, 1, 2]), np.array([3, 2, 0, 0, 3])).numpy(),
                                  [7, -np.inf, 9, -np.inf, -np.inf])
    doubles = SparseScores(np.array([0, 1]), np.array([2]), np.array([0.5]), 3, fill=0.0)
    assert doubles.values.dtype == np.float64 and doubles.dtype == torch.float64
    np.testing.assert_array_equal(doubles.rows(torch.tensor([0]), cpu).numpy(), [[0, 0, 0.5]])
    np.testing.assert_array_equal(doubles.values_at(np.array([0, 0]), np.array([2, 1])).numpy(), [0.5, 0])
    nothing = SparseScores(np.array([0, 0, 0]), np.array([], dtype=np.int64), np.array([], dtype=np.float32), 3)
    np.testing.assert_array_equal(nothing.values_at(np.array([1]), np.array([2])).numpy(), [-np.inf])


def test_ranking_result_arrays_and_load(tmp_path):
    result = rank_matrix([[1, 3, 2], [0, 0, 5]], [[], [2]], [[0], [1, 2]], k=2)
    arrays = result.to_arrays()
    assert list(arrays) == ["topk_entities", "topk_scores", "target_offsets", "target_values", "greater", "ties",
                            "num_candidates"]
    np.testing.assert_array_equal(arrays["target_offsets"], [0, 1, 3])
    np.testing.assert_array_equal(arrays["target_values"], [0, 1, 2])
    again = RankingResult.from_arrays(arrays)
    assert again.targets == result.targets and again.k == 2
    for name, array in arrays.items():
        np.testing.assert_array_equal(again.to_arrays()[name], array, err_msg=name)
    result.save(tmp_path / "r.npz")
    loaded = RankingResult.load(tmp_path / "r.npz")
    for name, array in arrays.items():
        np.testing.assert_array_equal(loaded.to_arrays()[name], array, err_msg=name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.greater = np.zeros(3, dtype=np.int64)  # frozen (k, a property, cannot be set either way)
    # plain arrays only: a pickled object array in the file is refused, not unpickled
    np.savez(tmp_path / "p.npz", **{**arrays, "greater": np.array([None, 1, 2], dtype=object)})
    with pytest.raises(ValueError, match=whole("Object arrays cannot be loaded when allow_pickle=False")):
        RankingResult.load(tmp_path / "p.npz")


# ---------------------------------------------------------------------------------------------------- blocks


def test_entity_block_size_at_the_minimum_width():
    minimum = ranking.MIN_AUTO_BLOCK
    assert minimum == 4096
    # a budget of exactly one minimum-width block: as many blocks as fit the minimum, balanced
    assert ranking.entity_block_size(1, 3 * minimum + 5, memory_budget=4 * minimum) == 4098
    # one column wider than the minimum: as many blocks as the budget needs
    assert ranking.entity_block_size(1, 3 * minimum + 5, memory_budget=4 * (minimum + 1)) == 4098
    assert ranking.entity_block_size(1, 4 * minimum, memory_budget=4 * (minimum + 1)) == minimum
    assert ranking.entity_block_size(2, 4 * minimum, memory_budget=8 * 2 * minimum, itemsize=8) == minimum
    assert ranking.entity_block_size(2, 4 * minimum, memory_budget=8 * 2 * minimum) == 2 * minimum
    assert ranking.entity_block_size(3, 10, memory_budget=3 * 10 * 4) is None
    # one-byte items, one row: the budget in bytes is the width (2 blocks of 1.5 minimum widths)
    assert ranking.entity_block_size(1, 3 * minimum, memory_budget=2 * minimum, itemsize=1) == 3 * minimum // 2
    assert ranking.entity_block_size(3, 10, memory_budget=3 * 10 * 4 - 1) is None  # narrower than the minimum


def test_entity_block_size_against_a_brute_force(monkeypatch):
    # the rule: None when the whole tensor fits; else the widest balanced block (ceil(E / n) for n blocks) that
    # fits the budget and is at least the minimum width; when none is both, fewer blocks: at least the minimum
    monkeypatch.setattr(ranking, "MIN_AUTO_BLOCK", 8)
    for rows in (1, 3):
        for num_entities in range(1, 41):
            for width in range(0, num_entities + 2):
                for budget in {width * 4 * rows, width * 4 * rows + 4 * rows - 1}:
                    got = ranking.entity_block_size(rows, num_entities, budget)
                    if rows * num_entities * 4 <= budget:
                        assert got is None
                        continue
                    balanced = [-(-num_entities // n) for n in range(1, num_entities + 1)]
                    both = [b for b in balanced if b >= 8 and b * 4 * rows <= budget]
                    case = (rows, num_entities, budget, got)
                    if both:
                        assert got == (None if max(both) == num_entities else max(both)), case
                    else:
                        assert got is None or (got >= 8 and got in balanced and got * 4 * rows > budget), case
                        assert (got is None) == (num_entities < 16), case  # two blocks need twice the minimum


@pytest.fixture
def block_sizes(monkeypatch):
    """The arguments of every entity_block_size call rank() makes."""
    seen: list[tuple] = []
    original = ranking.entity_block_size

    def spy(*args):
        seen.append(args)
        return original(*args)

    monkeypatch.setattr(ranking, "entity_block_size", spy)
    return seen


@pytest.fixture
def blocked_calls(monkeypatch):
    return count_calls(monkeypatch, ranking, "_rank_blocked")


def test_memory_budget_item_sizes_and_rows(block_sizes, blocked_calls):
    num_entities = 2 * ranking.MIN_AUTO_BLOCK + 3
    scores, questions, filter_sets, target_lists = random_case(6, 5, num_entities, True, False)
    common = dict(num_entities=num_entities, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=3)
    expected = rank(score_fn_from_matrix(scores), questions, **common)
    for matrix, itemsize in ((scores.astype(np.float64), 8), (scores.astype(np.float16), 4), (scores, 4)):
        block_sizes.clear()
        result = rank(MatrixScores(matrix), questions, memory_budget=4 * 5 * ranking.MIN_AUTO_BLOCK, batch_size=7,
                      **common)
        assert block_sizes == [(5, num_entities, 4 * 5 * ranking.MIN_AUTO_BLOCK, itemsize)]
        np.testing.assert_array_equal(result.greater, expected.greater)
    block_sizes.clear()
    rank(MatrixScores(scores), questions, memory_budget=10**9, batch_size=2, **common)
    assert block_sizes == [(2, num_entities, 10**9, 4)]
    block_sizes.clear()
    sparse_rows, sparse_entities = np.nonzero(np.ones((5, 3), dtype=bool))
    sparse = SparseScores(np.arange(0, 16, 3), sparse_entities, np.zeros(15), num_entities)
    rank(sparse, questions, memory_budget=100, **common)
    assert block_sizes == [(5, num_entities, 100, 8)]
    assert len(blocked_calls) > 0


def test_smaller_batches_without_score_blocks(block_sizes):
    num_entities = 10
    scores, questions, filter_sets, target_lists = random_case(8, 7, num_entities, True, True)
    common = dict(num_entities=num_entities, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=3)
    expected = reference(scores, filter_sets, target_lists, 3)
    lookup = {int(questions.relation[i]): i for i in range(len(questions))}
    for budget, most in ((4 * num_entities * 3, 3), (4 * num_entities * 3 - 1, 2), (1, 1), (0, 1), (10**9, 4)):
        seen: list[int] = []

        def score(anchor, relation, side):
            seen.append(int(relation.numel()))
            return torch.from_numpy(scores[[lookup[int(r)] for r in relation]])

        result = rank(score, questions, memory_budget=budget, batch_size=4, **common)
        assert max(seen) == most, budget
        assert_matches(result, expected, 3)
    assert block_sizes == []


def test_a_block_as_wide_as_every_entity_is_no_block(blocked_calls):
    scores = [[1, 2, 3], [3, 2, 1]]
    for block in (3, 4):
        result = rank_matrix(scores, [[0], []], [[1], [2]], k=2, entity_block=block)
        np.testing.assert_array_equal(result.topk_entities, [[2, 1], [0, 1]])
    assert blocked_calls == []
    result = rank_matrix(scores, [[0], []], [[1], [2]], k=2, entity_block=2)
    np.testing.assert_array_equal(result.topk_entities, [[2, 1], [0, 1]])
    np.testing.assert_array_equal(result.greater, [1, 2])
    assert len(blocked_calls) == 1


@pytest.mark.parametrize("k", [150, 125, 300])  # the 150th place clear of the 151st; tied at the boundary; all
@pytest.mark.parametrize("block", [None, 64])
def test_wide_top_k_lists_with_many_ties_keep_ids_ascending(k, block):
    # ties must stay in id order through every sort (an unstable sort reorders ties from about 100 columns on)
    rng = np.random.default_rng(k)
    scores = np.stack([rng.permutation(np.repeat(np.arange(6, dtype=np.float32), 50)) for _ in range(3)])
    filter_sets = [set(), set(rng.choice(300, 20, replace=False).tolist()), set()]
    target_lists = [[0, 299], [5], []]
    result = rank(score_fn_from_matrix(scores), tail_questions(3), num_entities=300,
                  filter=Ragged.from_lists([sorted(s) for s in filter_sets]), targets=Ragged.from_lists(target_lists),
                  k=k, entity_block=block)
    assert_matches(result, reference(scores, filter_sets, target_lists, k), k)


def test_defaults_ten_places_and_batches_of_1024():
    num_questions = 1025
    scores = np.tile(np.arange(12, dtype=np.float32), (num_questions, 1))
    seen: list[int] = []

    def score(anchor, relation, side):
        seen.append(int(anchor.numel()))
        return torch.from_numpy(scores[anchor.numpy()])

    result = rank(score, tail_questions(num_questions), num_entities=12, filter=Ragged.empty(num_questions))
    assert seen == [1024, 1]
    assert result.k == 10 and result.topk_entities[0].tolist() == list(range(11, 1, -1))


def test_entity_blocks_of_one():
    scores, questions, filter_sets, target_lists = random_case(9, 6, 7, True, True)
    expected = reference(scores, filter_sets, target_lists, 3)
    result = rank(score_fn_from_matrix(scores), questions, num_entities=7,
                  filter=Ragged.from_lists([sorted(s) for s in filter_sets]), targets=Ragged.from_lists(target_lists),
                  k=3, entity_block=1)
    assert_matches(result, expected, 3)


class Blocks:
    """A score function with a score_block method, recording the (start, stop) of every block asked for."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores, self.asked = scores, []

    def __call__(self, anchor, relation, side):
        self.asked.append((0, self.scores.shape[1]))
        return torch.from_numpy(self.scores[relation.numpy()])

    def score_block(self, anchor, relation, side, start, stop):
        self.asked.append((start, stop))
        return torch.from_numpy(self.scores[relation.numpy(), start:stop].copy())


def test_score_functions_with_blocks_are_called_block_by_block(block_sizes):
    scores, questions, filter_sets, target_lists = random_case(10, 4, 5, True, False)
    questions = tail_questions(4)
    expected = reference(scores, filter_sets, target_lists, 2)
    common = dict(num_entities=5, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=2)
    blocks = Blocks(scores)
    assert_matches(rank(blocks, questions, entity_block=2, **common), expected, 2)
    assert set(blocks.asked) == {(0, 2), (2, 4), (4, 5)}
    blocks = Blocks(scores)
    assert_matches(rank(blocks, questions, memory_budget=4 * 4 * 5 - 1, **common), expected, 2)
    assert block_sizes == [(4, 5, 4 * 4 * 5 - 1, 4)]  # a score function's scores count as 4 bytes
    assert blocks.asked == [(0, 5)]  # narrower than the minimum: no blocks


def test_a_key_past_the_only_question():
    scores = MatrixScores(np.zeros((1, 3), dtype=np.float32), Questions(np.array([1]), np.array([0]),
                                                                          np.array([HEAD])))
    for anchor, side in ((2, HEAD), (0, HEAD), (1, TAIL)):
        with pytest.raises(KeyError):
            scores(torch.tensor([anchor]), torch.tensor([0]), side)


def test_memory_budget_of_a_matrix_given_with_questions_counts_its_item_size(block_sizes):
    # a MatrixScores with questions is called by key (a plain score function with score_block), and its blocks keep
    # the matrix's dtype: a float64 matrix's blocks take 8 bytes an entry, which the budget must count (it counted 4)
    num_entities = 4 * ranking.MIN_AUTO_BLOCK
    scores, questions, filter_sets, target_lists = random_case(9, 3, num_entities, True, False)
    common = dict(num_entities=num_entities, filter=Ragged.from_lists([sorted(s) for s in filter_sets]),
                  targets=Ragged.from_lists(target_lists), k=3)
    expected = reference(scores, filter_sets, target_lists, 3)
    budget = 8 * 3 * ranking.MIN_AUTO_BLOCK  # blocks of MIN_AUTO_BLOCK entities in float64, twice as wide in float32
    for dtype, itemsize in ((np.float64, 8), (np.float32, 4), (np.float16, 4)):
        widths: list[int] = []

        class Recorded(MatrixScores):
            def score_block(self, anchor, relation, side, start, stop):
                block = super().score_block(anchor, relation, side, start, stop)
                widths.append(block.shape[1] * block.shape[0] * max(4, block.element_size()))
                return block

        block_sizes.clear()
        result = rank(Recorded(scores.astype(dtype), questions), questions, memory_budget=budget, **common)
        assert block_sizes == [(3, num_entities, budget, itemsize)]
        assert widths and max(widths) <= budget
        assert_matches(result, expected, 3)
