"""Evaluation reports carry PyKEEN's rank family (micro_AMR, micro_AMRI, micro_zMR, ...) from the engine's
candidate counts, equal to PyKEEN on brute-force filtered ranks, in the tables, metrics.csv and summary.json."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from tests._evaluation_support import answers_of, build_campaign, full_scores
from tests._pool_support import storage  # noqa: F401

import pykeen.metrics.ranking as pr  # noqa: E402

CHECKS = {"micro_AMR": pr.AdjustedArithmeticMeanRank(), "micro_AMRI": pr.AdjustedArithmeticMeanRankIndex(),
          "micro_zMR": pr.ZArithmeticMeanRank(), "micro_AMRR": pr.AdjustedInverseHarmonicMeanRank(),
          "micro_zMRR": pr.ZInverseHarmonicMeanRank(), "micro_AHits@10": pr.AdjustedHitsAtK(k=10),
          "micro_zHits@1": pr.ZHitsAtK(k=1), "micro_AGMRI": pr.AdjustedGeometricMeanRankIndex(),
          "micro_zGMR": pr.ZGeometricMeanRank(), "micro_MedR": pr.MedianRank(),
          "micro_RankMAD": pr.MedianAbsoluteDeviation()}


def _brute_micro(system, positives, known, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """Filtered micro rank (tie policy) and candidate count of both sides of every positive triple (SPEC 5.2),
    from the model's full scores."""
    from pooling.engine.questions import Questions

    asked = sorted({(0, r, t) for h, r, t in positives} | {(1, r, h) for h, r, t in positives})
    questions = Questions(np.array([a for _s, _r, a in asked]), np.array([r for _s, r, _a in asked]),
                          np.array([s for s, _r, _a in asked]))
    scores = full_scores(system, questions)
    ranks, candidates = [], []
    for row, (side, rel, anchor) in enumerate(asked):
        pos = answers_of(positives, side, rel, anchor)
        excluded = answers_of(known, side, rel, anchor) | pos
        for answer in sorted(pos):
            mask = np.ones(scores.shape[1], dtype=bool)
            mask[list(excluded - {answer})] = False
            greater = int((scores[row][mask] > scores[row, answer]).sum())
            ties = int((scores[row][mask] == scores[row, answer]).sum()) - 1
            ranks.append(1.0 + greater + {"optimistic": 0.0, "realistic": ties / 2, "pessimistic": ties}[policy])
            candidates.append(int(mask.sum()))
    assert len(ranks) == 2 * len(positives)
    return np.array(ranks), np.array(candidates)


@pytest.mark.django_db
def test_report_tables_and_files_carry_the_rank_family(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample, write_outputs
    from evaluation.services.labels import JudgmentsFile
    from evaluation.services.metrics import family_columns
    from pooling.selectors.kg import kg_triples
    from pooling.selectors.pools import sample_questions

    campaign = build_campaign(tmp_path, size=20, depth=2)
    options = EvaluationOptions(policy="pessimistic", analyses=False)
    result = evaluate_sample(campaign.sample, systems=campaign.systems, source=JudgmentsFile(campaign.judgments),
                             options=options)
    sq = sample_questions(campaign.sample)
    arrays = kg_triples(campaign.kg)
    known = [tuple(x) for split in ("train", "valid", "test") for x in arrays[split].tolist()]
    asked = set(zip(sq.questions.side.tolist(), sq.questions.relation.tolist(), sq.questions.anchor.tolist()))
    # the completed labels: judgments of triples one of whose sides the sample asks (as the evaluation keeps them)
    positives = [t for t, y in campaign.judged.items() if y and ((0, t[1], t[2]) in asked or (1, t[1], t[0]) in asked)]
    compared = 0
    for system in campaign.systems:
        ranks, candidates = _brute_micro(system, positives, known, "pessimistic")
        row = result.tables["completed"].loc[system.name]
        for column, metric in CHECKS.items():
            assert row[column] == pytest.approx(metric(ranks=ranks, num_candidates=candidates), rel=1e-9), column
            compared += 1
    assert compared == len(campaign.systems) * len(CHECKS)

    written = write_outputs(result, tmp_path / "out", figures=False)
    assert "metrics.csv" in written
    with open(tmp_path / "out" / "metrics.csv", newline="") as handle:
        header = next(csv.reader(handle))
    assert set(family_columns()) <= set(header)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(family_columns()) <= set(summary["metrics"]) and summary["options"]["policy"] == "pessimistic"


def test_reweighted_values_weight_relations_not_rankings():
    from evaluation.services.metrics import MicroRanks, micro_reweighted_values, micro_values

    ranks = MicroRanks(question=np.arange(4), answer=np.arange(4), ranks=np.array([1.0, 3.0, 2.0, 8.0]),
                       num_candidates=np.array([10, 10, 20, 20]))
    relation = np.array([0, 0, 0, 1])
    # relation 1 alone (weight 1): the values of its single ranking
    alone = micro_reweighted_values(ranks, relation, np.array([0.0, 1.0]), (1, 10))
    single = micro_values(MicroRanks(np.arange(1), np.arange(1), np.array([8.0]), np.array([20])), (1, 10))
    assert alone == pytest.approx(single, rel=1e-14, nan_ok=True)
    # equal relation weights: per-ranking weights 1/6, 1/6, 1/6, 1/2
    half = micro_reweighted_values(ranks, relation, np.array([1.0, 1.0]), (1, 10))
    weights = np.array([1, 1, 1, 3]) / 6
    expected = pr.AdjustedArithmeticMeanRankIndex()(ranks=ranks.ranks, num_candidates=ranks.num_candidates,
                                                     weights=weights)
    assert half["micro_MR"] == pytest.approx(0.5 * 2 + 0.5 * 8)
    assert half["micro_AMRI"] == pytest.approx(expected, rel=1e-12)
