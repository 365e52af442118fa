"""Issue 16: what an imported score matrix or run can give the protocols beyond link prediction, on hand-made
stored scores: a triple's score is its (h, r, ?) entry, else its (?, r, t) entry; a triple without either, a relation
whose heads lack a row, a run asked for pairs or relations: "not computed" with the reason."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.services.protocol_scores import NotComputable, pair_block_scorer, relation_scorer, triple_scores
from evaluation.services.scores import MatrixSource, RunSource
from pooling.engine.questions import HEAD, TAIL

E, R = 3, 2


def stored(cls, side, relation, anchor, **arrays):
    """A MatrixSource / RunSource over given arrays (no file): rows by question (side, relation, anchor)."""
    source = cls(system=None, num_entities=E, num_relations=R, kind="test")
    keys = source._question_keys(np.array(side), np.array(relation), np.array(anchor))
    source._data = {"side": np.array(side), "relation": np.array(relation), "anchor": np.array(anchor), **arrays}
    source._order = np.argsort(keys, kind="stable")
    source._sorted_keys = keys[source._order]
    return source


def matrix_every_tail_question():
    """Rows (h, r, ?) for every h and r: row value of t = 10 h + t + 100 r."""
    side, relation, anchor, rows = [], [], [], []
    for r in range(R):
        for h in range(E):
            side.append(TAIL), relation.append(r), anchor.append(h)
            rows.append([10 * h + t + 100 * r for t in range(E)])
    return stored(MatrixSource, side, relation, anchor, scores=np.array(rows, dtype=np.float32))


def test_a_full_matrix_gives_triples_pairs_and_relations():
    source = matrix_every_tail_question()
    assert triple_scores(source, np.array([[2, 1, 0], [0, 0, 2]])).tolist() == [120.0, 2.0]
    block = pair_block_scorer(source, np.array([0, 1]))(1, np.array([2, 0]))
    assert np.asarray(block).tolist() == [[120, 121, 122], [100, 101, 102]]
    by_relation = relation_scorer(source, np.array([0, 1, 2]))(np.array([1]))  # best tail of each relation
    assert by_relation.tolist() == [[12.0, 112.0]]


def test_a_matrix_of_some_questions_falls_back_and_says_what_is_missing():
    # rows: (0, r0, ?) as a tail question and (?, r0, 2) as a head question
    source = stored(MatrixSource, [TAIL, HEAD], [0, 0], [0, 2], scores=np.array([[1, 2, 3], [7, 8, 9]], np.float32))
    assert triple_scores(source, np.array([[0, 0, 1], [1, 0, 2]])).tolist() == [2.0, 8.0]  # 2nd: head question
    with pytest.raises(NotComputable, match="no score for 1 of the 2 triples"):
        triple_scores(source, np.array([[0, 0, 1], [1, 1, 0]]))
    with pytest.raises(NotComputable, match="some heads of 1 of the 1 relations"):
        pair_block_scorer(source, np.array([0]))
    with pytest.raises(NotComputable, match="lacks 3 of the 4 rows"):
        relation_scorer(source, np.array([0, 1]))


def test_a_run_gives_listed_entries_only_and_never_pairs_or_relations():
    # one question (0, r0, ?) listing entity 2 (score 5) and entity 1 (score 4)
    source = stored(RunSource, [TAIL], [0], [0], offsets=np.array([0, 2]), entities=np.array([2, 1]),
                    scores=np.array([5.0, 4.0]))
    assert triple_scores(source, np.array([[0, 0, 2], [0, 0, 1]])).tolist() == [5.0, 4.0]
    with pytest.raises(NotComputable, match="the run has no score for 1 of the 3 triples"):
        triple_scores(source, np.array([[0, 0, 2], [0, 0, 1], [0, 0, 0]]))  # entity 0 not retrieved
    with pytest.raises(NotComputable, match="not the scores of every"):
        pair_block_scorer(source, np.array([0]))
    with pytest.raises(NotComputable, match="does not score every relation"):
        relation_scorer(source, np.array([0]))
