"""known_answers for a few questions of many triples (a pool chunk of a 5M-triple KG) keeps only their pairs: the
same sets as a brute force and as the path for many questions."""
from __future__ import annotations

import numpy as np

from pooling.engine.questions import HEAD, TAIL, Questions, known_answers, questions_from_triples


def test_few_questions_match_bruteforce_and_the_many_questions_path() -> None:
    rng = np.random.default_rng(4)
    train = np.stack([rng.integers(0, 40, 3000), rng.integers(0, 3, 3000), rng.integers(0, 40, 3000)], axis=1)
    test = np.concatenate([train[:50], np.array([[41, 2, 0], [0, 2, 41]])])  # repeats, ids beyond train's
    all_questions, _answers = questions_from_triples(np.concatenate([train, test]))
    picked = np.sort(rng.choice(len(all_questions), 25, replace=False))
    few = Questions(np.concatenate([all_questions.anchor[picked], [39, 41]]),
                    np.concatenate([all_questions.relation[picked], [0, 2]]),
                    np.concatenate([all_questions.side[picked], [HEAD, TAIL]]).astype(np.int8))
    got = known_answers(few, train, test)
    triples = {tuple(t) for t in np.concatenate([train, test]).tolist()}
    for row in range(len(few)):
        anchor, relation, side = int(few.anchor[row]), int(few.relation[row]), int(few.side[row])
        expected = sorted({h for h, r, t in triples if r == relation and t == anchor} if side == HEAD
                          else {t for h, r, t in triples if r == relation and h == anchor})
        assert got.values[got.offsets[row]:got.offsets[row + 1]].tolist() == expected
    everything = known_answers(all_questions, train, test)  # many questions: every pair kept
    rows = [np.flatnonzero((all_questions.anchor == few.anchor[i]) & (all_questions.relation == few.relation[i])
                           & (all_questions.side == few.side[i])) for i in range(len(picked))]
    for i, (match,) in enumerate(rows):
        np.testing.assert_array_equal(got.values[got.offsets[i]:got.offsets[i + 1]],
                                      everything.values[everything.offsets[match]:everything.offsets[match + 1]])
