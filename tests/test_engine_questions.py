"""questions_from_triples / known_answers / Ragged on hand cases."""
from __future__ import annotations

import numpy as np
import pytest

from pooling.engine import questions as questions_module
from pooling.engine.questions import HEAD, TAIL, Questions, Ragged, known_answers, questions_from_triples


def test_questions_from_triples_aggregates_and_sorts() -> None:
    triples = np.array([[0, 1, 2], [3, 1, 2], [0, 1, 4], [0, 0, 2]])
    questions, answers = questions_from_triples(triples)
    got = list(zip(questions.side.tolist(), questions.relation.tolist(), questions.anchor.tolist()))
    # (side, relation, anchor) order; (?, 1, 2) is asked by two triples but is one question
    assert got == [(HEAD, 0, 2), (HEAD, 1, 2), (HEAD, 1, 4), (TAIL, 0, 0), (TAIL, 1, 0), (TAIL, 1, 3)]
    assert answers.to_lists() == [[0], [0, 3], [0], [2], [2, 4], [2]]
    assert len(questions) == len(answers) == 6


def test_known_answers_over_several_splits() -> None:
    train = np.array([[0, 0, 1], [0, 0, 2], [5, 0, 1]])
    test = np.array([[0, 0, 3], [0, 0, 2]])  # (0, 0, 2) in both splits counts once
    questions = Questions(np.array([0, 1, 9]), np.array([0, 0, 0]), np.array([TAIL, HEAD, TAIL]))
    answers = known_answers(questions, train, test)
    assert answers.to_lists() == [[1, 2, 3], [0, 5], []]


@pytest.mark.parametrize("combined_keys", [True, False])
def test_known_answers_match_sets_on_random_triples(combined_keys: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # both sorting paths (one int64 key per pair, or lexsort when keys would overflow) against plain sets
    if not combined_keys:
        monkeypatch.setattr(questions_module, "_COMBINED_KEY_LIMIT", 0)
    rng = np.random.default_rng(5)
    splits = [rng.integers(0, [40, 6, 40], size=(size, 3)) for size in (300, 40, 60)]
    questions, _ = questions_from_triples(splits[2])
    asked = Questions(np.append(questions.anchor, 39), np.append(questions.relation, 5), np.append(questions.side, HEAD))
    expected = []
    for anchor, relation, side in zip(asked.anchor.tolist(), asked.relation.tolist(), asked.side.tolist()):
        expected.append(sorted({int(h if side == HEAD else t) for split in splits for h, r, t in split.tolist()
                                if r == relation and (t if side == HEAD else h) == anchor}))
    assert known_answers(asked, *splits).to_lists() == expected


def test_ragged_helpers() -> None:
    ragged = Ragged.from_lists([[3, 1], [], [2]])
    assert len(ragged) == 3 and ragged.nnz == 3
    assert ragged.lengths.tolist() == [2, 0, 1]
    assert ragged.row(0).tolist() == [3, 1]
    assert ragged.row_ids().tolist() == [0, 0, 2]
    assert ragged.take([2, 0]).to_lists() == [[2], [3, 1]]
    assert Ragged.from_pairs(np.array([2, 0, 0, 0]), np.array([7, 5, 4, 5]), 3).to_lists() == [[4, 5], [], [7]]
    questions = Questions(np.array([4, 5]), np.array([0, 1]), np.array([HEAD, TAIL]))
    assert questions.take([1]).anchor.tolist() == [5]
