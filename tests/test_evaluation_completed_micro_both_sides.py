"""Completed micro metrics rank both sides of every positive triple (SPEC 5.2: 2|T| rankings), including the side
that asks a question the sample did not ask; macro metrics average over the questions with a positive answer.
A hand-computed case: one sampled triple (a, r, b), a positive pool triple (a, r, c) whose head question
(?, r, c) is not sampled, and a negative (a, r, d)."""
from __future__ import annotations

import numpy as np
import pytest

from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db

#: scores of each question over the entities a..f (filtered ranks worked out by hand below)
SCORES = {
    ("tail0", "a"): dict(a=0.1, b=0.5, c=0.9, d=0.7, e=0.3, f=0.6),  # (a, r, ?)
    ("head0", "b"): dict(a=0.4, b=0.2, c=0.8, d=0.1, e=0.3, f=0.5),  # (?, r, b)
    ("head1", "c"): dict(a=0.6, b=0.7, c=0.2, d=0.6, e=0.1, f=0.9),  # (?, r, c): not a sample question
}


def test_completed_micro_ranks_both_sides_of_every_positive(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from pooling.services.kg_import import import_kg
    from pooling.services.rankings import import_scores
    from pooling.services.samples import draw_sample

    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "train.txt").write_text("e\tr\tf\nf\tr\td\nd\tr\te\n")
    (folder / "valid.txt").write_text("c\tr\tf\n")
    (folder / "test.txt").write_text("a\tr\tb\n")
    kg = import_kg("tiny", folder)
    sample = draw_sample(kg, size=1, seed=0)
    labels = tmp_path / "labels.tsv"
    labels.write_text("a\tr\tb\tY\na\tr\tc\tY\na\tr\td\tN\n")
    entities = list("abcdef")
    np.savez(tmp_path / "scores.npz", scores=np.array([[row[e] for e in entities] for row in SCORES.values()]),
             entities=np.array(entities))
    (tmp_path / "questions.tsv").write_text("".join(f"{qid}\t{anchor}\tr\n" for qid, anchor in SCORES))
    system = import_scores(sample, tmp_path / "scores.npz", name="hand", questions_path=tmp_path / "questions.tsv")
    result = evaluate_sample(sample, systems=[system], source=JudgmentsFile(labels),
                             options=EvaluationOptions(analyses=False))

    # sparse: T = {(a, r, b)}; filter = known answers + positives
    #   tail (a, r, ?) -> b: c, d, f score higher -> 4;  head (?, r, b) -> a: c, f higher -> 3
    # completed: T = {(a, r, b), (a, r, c)}; c is filtered when ranking b and b when ranking c
    #   (a, r, ?) -> b: d, f -> 3;  (a, r, ?) -> c: nothing -> 1;  (?, r, b) -> a: 3
    #   (?, r, c) -> a (the question the sample does not ask): b, f higher, d tied -> 1 + 2 + 1/2 = 3.5
    expected_micro = {"sparse": [4, 3], "completed": [3, 1, 3, 3.5]}
    # macro (filter train + valid: nothing here): first relevant rank per question with a positive
    #   sparse: (a, r, ?) b at 4, (?, r, b) a at 3;  completed: (a, r, ?) c at 1, (?, r, b) 3, (?, r, c) 3.5
    expected_best = {"sparse": [4, 3], "completed": [1, 3, 3.5]}
    for name in ("sparse", "completed"):
        ranks = np.array(expected_micro[name], dtype=float)
        row = result.tables[name].loc["hand"]
        assert result.label_stats[name]["micro_rankings"] == ranks.size
        assert row["micro_MR"] == pytest.approx(ranks.mean(), rel=1e-12)
        assert row["micro_MRR"] == pytest.approx((1 / ranks).mean(), rel=1e-12)
        assert row["micro_Hits@3"] == pytest.approx((ranks <= 3).mean(), rel=1e-12)
        assert row["macro_MRR"] == pytest.approx((1 / np.array(expected_best[name])).mean(), rel=1e-12)
    assert result.label_stats["completed"]["questions"] == 3
    assert result.label_stats["completed"]["sampled_questions"] == 2
