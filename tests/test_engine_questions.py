"""questions_from_triples / known_answers / Ragged on hand cases."""
from __future__ import annotations

import numpy as np

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
