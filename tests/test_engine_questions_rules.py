"""questions.py's rules, case by case (issue 19: each rule's mutants): the shapes and whole messages of
as_triples / Ragged / Questions, the question keys by hand, ids that bound the key sizes (heads, relations,
tails, questions beyond the triples), no questions or no triples, and which sort known_answers takes."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from pooling.engine import questions as questions_module
from pooling.engine.questions import HEAD, TAIL, Questions, Ragged, as_triples, known_answers, questions_from_triples
from tests._raises_support import whole
from tests._spy_support import count_calls


def brute_answers(questions: Questions, *splits) -> list[list[int]]:
    triples = {tuple(t) for split in splits for t in np.asarray(split).reshape(-1, 3).tolist()}
    return [sorted({h for h, r, t in triples if r == relation and t == anchor} if side == HEAD
                   else {t for h, r, t in triples if r == relation and h == anchor})
            for anchor, relation, side in zip(questions.anchor.tolist(), questions.relation.tolist(),
                                              questions.side.tolist())]


def test_as_triples_shapes_and_messages():
    for empty in ([], np.zeros((0, 3)), np.zeros((0,))):
        got = as_triples(empty)
        assert got.shape == (0, 3) and got.dtype == np.int64
    got = as_triples([[1, 2, 3]])
    assert got.tolist() == [[1, 2, 3]] and got.dtype == np.int64
    strided = np.arange(18).reshape(3, 6)[:, ::2]
    assert as_triples(strided).flags.c_contiguous and as_triples(strided).tolist() == strided.tolist()
    for bad, shape in (([1, 2, 3], "(3,)"), ([[1, 2]], "(1, 2)"), ([[1, 2, 3, 4]], "(1, 4)"),
                       (np.zeros((1, 1, 3)), "(1, 1, 3)")):
        with pytest.raises(ValueError, match=whole(f"triples must have shape (n, 3), got {shape}")):
            as_triples(bad)


def test_ragged_checks_in_whole():
    assert len(Ragged.empty(0)) == 0 and Ragged.empty(0).offsets.tolist() == [0]
    assert Ragged.empty(2).to_lists() == [[], []] and Ragged.empty(2).offsets.tolist() == [0, 0, 0]
    for offsets in ([], [1, 1], [[0, 1]]):
        with pytest.raises(ValueError, match=whole("offsets must be a 1-d array starting with 0")):
            Ragged(np.array(offsets), np.zeros(1))
    for offsets, values in (([0, -1], []), ([0, 2, 1], [5])):
        with pytest.raises(ValueError, match=whole("offsets must be non-decreasing")):
            Ragged(np.array(offsets), np.array(values))
    with pytest.raises(ValueError, match=whole("values must be 1-d with offsets[-1]=2 items, got (3,)")):
        Ragged(np.array([0, 2]), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=whole("values must be 1-d with offsets[-1]=3 items, got (2,)")):
        Ragged(np.array([0, 1, 3]), np.array([1, 2]))
    with pytest.raises(ValueError, match=whole("values must be 1-d with offsets[-1]=2 items, got (1, 2)")):
        Ragged(np.array([0, 2]), np.array([[1, 2]]))
    ragged = Ragged(np.array([0, 1, 1], dtype=np.int32), np.array([7], dtype=np.int16))
    assert ragged.offsets.dtype == ragged.values.dtype == np.int64 and ragged.to_lists() == [[7], []]


def test_ragged_from_lists_and_pairs():
    assert Ragged.from_lists([]).to_lists() == [] and Ragged.from_lists([]).offsets.tolist() == [0]
    built = Ragged.from_lists([[], [4, 4, 1]])
    assert built.offsets.tolist() == [0, 0, 3] and built.values.tolist() == [4, 4, 1]
    assert built.values.dtype == np.int64
    pairs = Ragged.from_pairs(np.array([1, 0, 1, 0, 1]), np.array([5, 5, 5, 3, 2]), 3)
    assert pairs.to_lists() == [[3, 5], [2, 5], []]
    kept = Ragged.from_pairs(np.array([1, 0, 1, 0, 1]), np.array([5, 5, 5, 3, 2]), 3, unique=False)
    assert kept.to_lists() == [[3, 5], [2, 5, 5], []]
    assert Ragged.from_pairs(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 2).to_lists() == [[], []]
    with pytest.raises(ValueError, match=whole("row_ids and values must have the same shape")):
        Ragged.from_pairs(np.array([0, 1]), np.array([0]), 2)
    for row in (-1, 2):
        with pytest.raises(ValueError, match=whole("row id out of range")):
            Ragged.from_pairs(np.array([0, row]), np.array([1, 1]), 2)
    assert Ragged.from_pairs(np.array([0, 1]), np.array([1, 1]), 2).to_lists() == [[1], [1]]


def test_ragged_access_and_equality():
    ragged = Ragged.from_lists([[3, 1], [], [2], [9, 8, 7]])
    assert len(ragged) == 4 and ragged.nnz == 6
    assert ragged.lengths.tolist() == [2, 0, 1, 3]
    assert ragged.row(3).tolist() == [9, 8, 7] and ragged.row(1).tolist() == []
    assert ragged.row_ids().tolist() == [0, 0, 2, 3, 3, 3]
    assert ragged.take([3, 1, 0, 3]).to_lists() == [[9, 8, 7], [], [3, 1], [9, 8, 7]]
    assert ragged.take([]).to_lists() == []
    assert ragged == Ragged.from_lists([[3, 1], [], [2], [9, 8, 7]])
    assert ragged != Ragged.from_lists([[3, 1], [], [2], [9, 8, 6]])  # same offsets, other values
    assert ragged != Ragged.from_lists([[3], [1], [2], [9, 8, 7]])  # same values, other offsets
    assert ragged.__eq__([[3, 1], [], [2], [9, 8, 7]]) is NotImplemented
    with pytest.raises(TypeError, match=whole("unhashable type: 'Ragged'")):
        hash(ragged)


def test_questions_checks_keys_and_equality():
    questions = Questions([[4], [5]], np.array([0, 2]), [HEAD, TAIL])
    assert questions.anchor.tolist() == [4, 5] and questions.side.dtype == np.int8
    assert questions.anchor.dtype == questions.relation.dtype == np.int64 and len(questions) == 2
    # (side * R + relation) * E + anchor with E = 10, R = 3: by hand
    assert questions.keys(10, 3).tolist() == [(0 * 3 + 0) * 10 + 4, (1 * 3 + 2) * 10 + 5]
    assert Questions([7], [2], [TAIL]).keys(8, 4).tolist() == [(1 * 4 + 2) * 8 + 7]
    assert questions.take([1, 1]) == Questions([5, 5], [2, 2], [TAIL, TAIL])
    for anchor, relation, side in (([4, 6], [0, 2], [HEAD, TAIL]), ([4, 5], [1, 2], [HEAD, TAIL]),
                                   ([4, 5], [0, 2], [HEAD, HEAD])):
        assert questions != Questions(anchor, relation, side)
    assert questions.__eq__("questions") is NotImplemented
    with pytest.raises(TypeError, match=whole("unhashable type: 'Questions'")):
        hash(questions)
    for anchor, relation, side in (([1], [1, 2], [0]), ([1, 2], [1], [0, 1]), ([1], [1], [0, 1])):
        with pytest.raises(ValueError, match=whole("anchor, relation and side must have the same length")):
            Questions(anchor, relation, side)
    for side in ([2], [0, -1]):
        with pytest.raises(ValueError, match=whole("side must be HEAD (0) or TAIL (1)")):
            Questions([1] * len(side), [0] * len(side), side)
    assert len(Questions([], [], [])) == 0


def test_questions_from_triples_where_each_column_sets_the_key_sizes():
    """Heads, then relations, then tails the largest ids: a key size taken from the wrong column makes two
    questions one. Expected: written out by hand, in (side, relation, anchor) order."""
    cases = {
        ((9, 0, 1), (0, 0, 1), (0, 1, 1)): ([(HEAD, 0, 1), (HEAD, 1, 1), (TAIL, 0, 0), (TAIL, 0, 9), (TAIL, 1, 0)],
                                            [[0, 9], [0], [1], [1], [1]]),
        ((0, 7, 1), (1, 0, 1), (0, 1, 0)): ([(HEAD, 0, 1), (HEAD, 1, 0), (HEAD, 7, 1), (TAIL, 0, 1), (TAIL, 1, 0),
                                             (TAIL, 7, 0)], [[1], [0], [0], [1], [0], [1]]),
        ((0, 0, 9), (1, 1, 0), (0, 1, 1)): ([(HEAD, 0, 9), (HEAD, 1, 0), (HEAD, 1, 1), (TAIL, 0, 0), (TAIL, 1, 0),
                                             (TAIL, 1, 1)], [[0], [1], [0], [9], [1], [0]]),
    }
    for triples, (expected, answers) in cases.items():
        questions, got = questions_from_triples(np.array(triples))
        assert list(zip(questions.side.tolist(), questions.relation.tolist(), questions.anchor.tolist())) == expected
        assert got.to_lists() == answers
        assert known_answers(questions, np.array(triples)).to_lists() == answers
    questions, answers = questions_from_triples([])
    assert len(questions) == 0 and answers.to_lists() == []
    questions, answers = questions_from_triples([[0, 0, 0]])
    assert list(zip(questions.side.tolist(), questions.anchor.tolist())) == [(HEAD, 0), (TAIL, 0)]
    assert answers.to_lists() == [[0], [0]]
    for bad in ([[0, 0, -1]], [[-1, 0, 0]], [[0, -1, 0]]):
        with pytest.raises(ValueError, match=whole("ids must be non-negative")):
            questions_from_triples(bad)
        with pytest.raises(ValueError, match=whole("ids must be non-negative")):
            known_answers(Questions([0], [0], [HEAD]), [[0, 0, 0]], bad)


def test_known_answers_of_questions_beyond_the_triples_and_of_nothing():
    triples = np.array([[0, 0, 1], [1, 0, 0], [1, 1, 1]])
    # anchors and relations larger than any triple's: their keys must not meet a triple's
    asked = Questions([1, 9, 0, 1, 5], [0, 0, 3, 1, 1], [HEAD, TAIL, TAIL, TAIL, HEAD])
    assert known_answers(asked, triples).to_lists() == [[0], [], [], [1], []] == brute_answers(asked, triples)
    wide = Questions([1, 0], [0, 6], [TAIL, TAIL])
    assert known_answers(wide, triples).to_lists() == [[0], []]
    # R = 7 from the questions: with R = 5, (?, 5, 1) would have the key of (1, 0, ?), whose answer is 0
    assert known_answers(Questions([1, 0], [5, 6], [HEAD, TAIL]), triples).to_lists() == [[], []]
    assert known_answers(asked).to_lists() == [[]] * 5  # no triples at all
    assert known_answers(asked, np.zeros((0, 3))).to_lists() == [[]] * 5
    none = known_answers(Questions([], [], []), triples)  # no questions, some triples
    assert none.to_lists() == [] and none.offsets.tolist() == [0]
    assert known_answers(Questions([], [], [])).to_lists() == []


@pytest.mark.parametrize("few", [True, False])
def test_known_answers_few_and_many_questions_against_a_brute_force(few):
    rng = np.random.default_rng(11)
    splits = [rng.integers(0, [12, 3, 12], size=(size, 3)) for size in (80, 30)]
    every, _ = questions_from_triples(np.concatenate(splits))
    picked = every.take(np.arange(0, len(every), 7)) if few else every
    asked = Questions(np.append(picked.anchor, [11, 0]), np.append(picked.relation, [2, 0]),
                      np.append(picked.side, [TAIL, HEAD]))
    assert (4 * len(asked) < 110) == few  # the "few questions" path filters the pairs first
    assert known_answers(asked, *splits).to_lists() == brute_answers(asked, *splits)


def test_the_last_wanted_question_keeps_its_answers_on_the_few_questions_path():
    triples = np.array([[h, 0, t] for h in range(6) for t in range(6) if h != t])  # 30 triples
    asked = Questions([5, 0], [0, 0], [TAIL, HEAD])  # keys: the last wanted is the largest
    assert known_answers(asked, triples).to_lists() == [[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]


def test_known_answers_sorts_one_combined_key_while_it_fits(monkeypatch):
    """One int64 (question key * E + answer) while 2 R E^2 < 2^62, else a lexsort: both give the same sets; the
    combined key past the limit would overflow."""
    calls = count_calls(monkeypatch, questions_module.np, "lexsort")
    small = np.array([[0, 1, 3], [2, 1, 3], [0, 0, 3]])
    asked = Questions([3, 0], [1, 1], [HEAD, TAIL])
    assert known_answers(asked, small).to_lists() == [[0, 2], [3]] and calls == []
    big = 2**30 - 1  # E = 2^30, R = 2: 2 R E^2 = 2^62, the limit itself: no longer combined
    triples = np.array([[big, 1, 3], [2, 1, 3], [0, 0, big]])
    asked = Questions([3, 0, big], [1, 0, 0], [HEAD, TAIL, HEAD])
    assert known_answers(asked, triples).to_lists() == [[2, big], [big], [0]] and calls == [1]
    calls.clear()
    triples = np.array([[big - 1, 1, 3], [2, 1, 3], [0, 0, big - 1]])  # E = 2^30 - 1: combined
    asked = Questions([3, 0], [1, 0], [HEAD, TAIL])
    assert known_answers(asked, triples).to_lists() == [[2, big - 1], [big - 1]] and calls == []


def test_few_questions_filter_the_pairs_first_when_four_per_question_are_fewer_than_the_triples(monkeypatch):
    """The pairs of a few questions only (issue 18): when 4 * questions < triples; same sets either way."""
    calls = count_calls(monkeypatch, questions_module.np, "minimum")
    asked = Questions([0, 1], [0, 0], [TAIL, HEAD])
    for asked, count, few in ((asked, 8, False), (asked, 9, True), (asked.take([0]), 5, True),
                              (asked.take([0]), 4, False)):
        triples = np.array([[i % 3, 0, (i + 1) % 4] for i in range(count)])
        calls.clear()
        assert known_answers(asked, triples).to_lists() == brute_answers(asked, triples)
        assert len(calls) == (2 if few else 0)  # once per side of the one array


def test_the_public_names_exist():
    assert questions_module.__all__ == ["HEAD", "TAIL", "Ragged", "Questions", "as_triples",
                                        "questions_from_triples", "known_answers"]
    assert all(hasattr(questions_module, name) for name in questions_module.__all__)


def test_ragged_and_questions_are_frozen():
    ragged, questions = Ragged.empty(1), Questions([1], [0], [HEAD])
    with pytest.raises(FrozenInstanceError, match=whole("cannot assign to field 'values'")):
        ragged.values = np.zeros(0, dtype=np.int64)
    with pytest.raises(FrozenInstanceError, match=whole("cannot assign to field 'side'")):
        questions.side = np.zeros(1, dtype=np.int8)
