"""One model, one number, whichever way it enters: a trained system, its own score matrix imported with
import_scores and its full-depth TREC run imported with import_run (both over the campaign's questions export)
get every micro, macro and PROBE value identical, on the sparse, completed and completed@d labels and for every tie
policy, and nothing is reported unranked."""
from __future__ import annotations

import numpy as np
import pytest

from tests._evaluation_support import build_campaign, exported_questions, full_scores, judged_campaign, write_run
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_trained_score_matrix_and_run_evaluate_identically(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import CampaignLabels
    from pooling.selectors.pools import entity_keys
    from pooling.services.rankings import import_run, import_scores

    data = build_campaign(tmp_path, architectures=("complex", "transe"))
    trained = data.systems[0]
    campaign = judged_campaign(data)
    # what a user outside kgpool does: score every question of the questions export with the model, hand it back
    qids, questions = exported_questions(campaign, tmp_path / "questions.tsv")
    scores = full_scores(trained, questions)
    np.save(tmp_path / "scores.npy", scores)
    write_run(tmp_path / "full.run", qids, scores, entity_keys(data.kg))
    as_matrix = import_scores(data.sample, tmp_path / "scores.npy", name="as-matrix",
                              questions_path=tmp_path / "questions.tsv", k=3)  # a shallow stored ranking on purpose
    as_run = import_run(data.sample, tmp_path / "full.run", name="as-run", questions_path=tmp_path / "questions.tsv")

    # the questions export names exactly the questions the completed evaluation ranks, with the same qids
    from evaluation.services.inputs import evaluation_inputs

    inputs = evaluation_inputs(data.sample, CampaignLabels(campaign))
    positives_per_row = inputs.sets["completed"].answers(inputs.asked.questions)[0].lengths
    asked = inputs.asked.questions
    evaluated = [(inputs.asked.qids[row], int(asked.side[row]), int(asked.relation[row]), int(asked.anchor[row]))
                 for row in np.flatnonzero(positives_per_row)]
    exported = list(zip(qids, questions.side.tolist(), questions.relation.tolist(), questions.anchor.tolist()))
    assert sorted(exported) == sorted(evaluated)

    systems = [trained, as_matrix, as_run]
    from annotation.selectors.labels import completed_labels

    positives = sum(x.label == "Y" for x in completed_labels(campaign))  # sampled triples + positive pool triples
    for policy in ("realistic", "optimistic", "pessimistic"):
        result = evaluate_sample(data.sample, systems=systems, source=CampaignLabels(campaign),
                                 options=EvaluationOptions(policy=policy, analyses=False))
        assert result.label_stats["completed"]["micro_rankings"] == 2 * positives
        assert result.label_stats["completed"]["questions"] == len(qids)  # = the questions export
        for set_name, table in result.tables.items():
            for other in ("as-matrix", "as-run"):
                for metric in table.columns:
                    assert table.loc[other, metric] == table.loc[trained.name, metric], (policy, set_name, other,
                                                                                          metric)
        for name in ("sparse", "completed"):
            # the grids reduce all systems' rows in one BLAS call, which may round rows differently in the last bit
            for grid in (result.probe_alpha[name], result.probe_beta[name]):
                for other in ("as-matrix", "as-run"):
                    np.testing.assert_allclose(grid.loc[other], grid.loc[trained.name], rtol=1e-13, atol=0)
        coverage = result.coverage.set_index(["label_set", "system"])
        assert (coverage[["questions_not_scored", "answers_unranked", "judged_unranked"]] == 0).all().all()
