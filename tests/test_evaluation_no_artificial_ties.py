"""Two answers of one question never tie unless their scores do: an imported score matrix whose stored ranking is
shallower than its answers (k=1) is evaluated from the kept scores, so with scores free of ties the optimistic and
pessimistic policies agree and equal the trained system's numbers."""
from __future__ import annotations

import numpy as np
import pytest

from tests._evaluation_support import full_scores
from tests._pool_support import import_umls, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


def test_answers_below_the_stored_depth_do_not_tie(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from pooling.selectors.pools import sample_questions
    from pooling.services.rankings import import_scores
    from pooling.services.samples import draw_sample

    kg = import_umls()
    trained = train_tiny(kg, "distmult")
    sample = draw_sample(kg, size=60, seed=5)
    sq = sample_questions(sample)
    several = np.flatnonzero(sq.answers.lengths >= 2)
    assert several.size  # questions with two sampled answers
    scores = full_scores(trained, sq.questions)
    assert all(np.unique(row).size == row.size for row in scores)  # no real ties anywhere
    np.save(tmp_path / "scores.npy", scores)
    imported = import_scores(sample, tmp_path / "scores.npy", name="imported", k=1)

    tables = {policy: evaluate_sample(sample, systems=[trained, imported],
                                      options=EvaluationOptions(policy=policy, analyses=False)).tables["sparse"]
              for policy in ("optimistic", "realistic", "pessimistic")}
    for policy, table in tables.items():
        assert table.loc["imported"].equals(table.loc[trained.name]), policy
        assert table.equals(tables["realistic"]), policy
