"""Issue 16 end to end on UMLS: one evaluation run computes triple classification, entity-pair ranking and property
prediction on the sparse labels and on a campaign's completed labels, for two small trained systems and an imported
score matrix. Every number is checked against a brute-force computation in this test from the models' own scores
(dense E x E pair scores sorted by hand, AP@K by its definition, relations ranked by hand); the classification
thresholds / metrics come from the core, fed with scores computed here. The matrix system gets "not computed" with
its reason, the report page shows each section, and the files carry the new metrics."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import kendalltau

from tests._evaluation_support import build_campaign, exported_questions, full_scores, judged_campaign
from tests._pool_support import storage  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
K = 15


def score_cube(system, num_entities: int, num_relations: int) -> np.ndarray:
    """[R, E, E] float64: the model's score of every (h, r, t), one relation at a time over all heads."""
    import torch

    from pooling.services.systems import load_system_model

    model = load_system_model(system, device="cpu")
    model.eval()
    heads = torch.arange(num_entities)
    with torch.no_grad():
        return np.stack([model.score_questions(heads, torch.full((num_entities,), r), 1).float().numpy()
                         for r in range(num_relations)]).astype(np.float64)


def brute_pair_map(cube, relevant_triples, known_triples, k):
    """MAP@K over relations with relevant pairs: all E x E pairs of the relation but the known ones, sorted by
    (score desc, h, t), AP@K = sum of P@i at the relevant ranks / min(K, |T_r|)."""
    num_entities = cube.shape[1]
    heads, tails = np.divmod(np.arange(num_entities * num_entities), num_entities)
    aps = []
    for r in sorted({int(x) for x in relevant_triples[:, 1]}):
        known = known_triples[known_triples[:, 1] == r]
        candidate = np.ones(num_entities * num_entities, dtype=bool)
        candidate[known[:, 0] * num_entities + known[:, 2]] = False
        scores = cube[r].reshape(-1)
        order = np.lexsort((tails, heads, -scores))
        top = [(int(heads[i]), int(tails[i])) for i in order[candidate[order]][:k]]
        relevant = {(h, t) for h, rr, t in relevant_triples.tolist() if rr == r}
        hits, total = 0, 0.0
        for i, pair in enumerate(top, start=1):
            if pair in relevant:
                hits += 1
                total += hits / i
        aps.append(total / min(k, len(relevant)))
    return float(np.mean(aps))


def brute_property_mrr(cube, positives, train):
    """MRR of the relations of test (h, r) with no r of h in train, a relation scored by its best tail, the
    relations h has in train filtered out, ties counted half."""
    train_pairs = {(h, r) for h, r, _t in train.tolist()}
    questions = sorted({(h, r) for h, r, _t in positives.tolist() if (h, r) not in train_pairs})
    reciprocal = []
    for h, r in questions:
        best = cube[:, h, :].max(axis=1)
        candidates = [rel for rel in range(cube.shape[0]) if rel != r and (h, rel) not in train_pairs]
        greater = sum(best[c] > best[r] for c in candidates)
        ties = sum(best[c] == best[r] for c in candidates)
        reciprocal.append(1.0 / (1 + greater + ties / 2))
    return float(np.mean(reciprocal)), len(questions)


@pytest.fixture
def evaluated(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import CampaignLabels
    from pooling.services.rankings import import_scores

    data = build_campaign(tmp_path, seed=1, architectures=("distmult", "complex"))  # seed 1: 2 property questions
    campaign = judged_campaign(data)
    qids, questions = exported_questions(campaign, tmp_path / "questions.tsv")
    np.save(tmp_path / "scores.npy", full_scores(data.systems[0], questions))
    matrix = import_scores(data.sample, tmp_path / "scores.npy", name="as-matrix",
                           questions_path=tmp_path / "questions.tsv", k=3)
    options = EvaluationOptions(analyses=False, protocols=("classification", "pair_ranking", "property"),
                                negatives=("judged", "corrupted-random"), negatives_seed=7, pair_k=K)
    systems = [*data.systems, matrix]
    result = evaluate_sample(data.sample, systems=systems, source=CampaignLabels(campaign), options=options)
    return data, campaign, systems, options, result


def test_one_run_computes_every_protocol_checked_by_brute_force_and_reports_it(evaluated, tmp_path):
    """One fixture (a campaign, trained systems, an evaluation: most of the time) for both checks."""
    check_numbers_against_brute_force(evaluated)
    check_report_exports_and_page(evaluated, tmp_path)


def check_numbers_against_brute_force(evaluated):
    from evaluation.core import classification as cls
    from evaluation.core.negatives import corrupt
    from evaluation.services.inputs import evaluation_inputs
    from evaluation.services.labels import CampaignLabels
    from pooling.selectors.kg import kg_triples

    data, campaign, systems, options, result = evaluated
    kg = data.kg
    arrays = kg_triples(kg)
    sets = evaluation_inputs(data.sample, CampaignLabels(campaign)).sets
    positives = {name: np.unique(sets[name].triples[sets[name].positive], axis=0) for name in ("sparse", "completed")}
    judged_negatives = sets["completed"].triples[~sets["completed"].positive]
    judged_positives = positives["completed"]
    assert len(judged_negatives) and len(positives["completed"]) > len(positives["sparse"])
    protocols = result.protocols
    status = protocols.status.set_index(["system", "protocol"]).status
    for system in data.systems:
        for protocol in ("link_prediction", "classification", "pair_ranking", "property"):
            assert status[(system.name, protocol)] == "computed"
    for protocol in ("classification", "pair_ranking", "property"):
        reason = status[("as-matrix", protocol)]
        assert reason.startswith("not computed: ") and len(reason) > 30, reason
    assert "no score for" in status[("as-matrix", "classification")]

    known = np.concatenate([arrays["train"], arrays["valid"], arrays["test"], judged_positives])
    test_outside = arrays["test"][~(arrays["test"][:, None, :] == positives["sparse"][None]).all(-1).any(-1)]
    frame = protocols.classification
    for system in data.systems:
        cube = score_cube(system, kg.num_entities, kg.num_relations)

        def score(triples):
            return cube[triples[:, 1], triples[:, 0], triples[:, 2]]

        # corrupted-random, rebuilt here: valid corruptions (seed), sparse corruptions (seed + 1)
        valid_neg = corrupt(arrays["valid"], kg.num_entities, known, seed=7, type_consistent=False).triples
        test_neg = corrupt(positives["sparse"], kg.num_entities, known, seed=8, type_consistent=False).triples
        valid = np.concatenate([arrays["valid"], valid_neg])
        valid_labels = np.r_[np.ones(len(arrays["valid"]), bool), np.zeros(len(valid_neg), bool)]
        thresholds = cls.learn_thresholds(score(valid), valid_labels, valid[:, 1], kg.num_relations)
        for label_set in ("sparse", "completed"):
            negatives = test_neg
            if label_set == "completed":
                negatives = np.unique(np.concatenate([test_neg, judged_negatives]), axis=0)
            triples = np.concatenate([positives[label_set], negatives])
            labels = np.r_[np.ones(len(positives[label_set]), bool), np.zeros(len(negatives), bool)]
            scores = score(triples)
            predicted = scores >= thresholds.for_relations(triples[:, 1])
            expected = {"accuracy": float(np.mean(predicted == labels)),
                        "ROC-AUC": cls.roc_auc(scores, labels), "PR-AUC": cls.pr_auc(scores, labels)}
            tp = int((predicted & labels).sum())
            expected["F1"] = 2 * tp / (2 * tp + int((predicted & ~labels).sum()) + int((~predicted & labels).sum()))
            got = frame[(frame.system == system.name) & (frame.label_set == label_set)
                        & (frame.negatives == "corrupted-random") & (frame.subset == "all")].set_index("metric").value
            for metric, value in expected.items():
                assert got[metric] == pytest.approx(value, rel=1e-9, abs=1e-12), (system.name, label_set, metric)
        # judged negatives: sparse positives vs the campaign's negatives
        got = frame[(frame.system == system.name) & (frame.label_set == "sparse") & (frame.negatives == "judged")
                    & (frame.subset == "all")].set_index("metric").value
        labels = np.r_[np.ones(len(positives["sparse"]), bool), np.zeros(len(judged_negatives), bool)]
        scores = score(np.concatenate([positives["sparse"], judged_negatives]))
        assert got["ROC-AUC"] == pytest.approx(cls.roc_auc(scores, labels), rel=1e-9)

        pairs = protocols.pair_ranking
        excluded = np.concatenate([arrays["train"], arrays["valid"], test_outside])
        for label_set in ("sparse", "completed"):
            got = pairs[(pairs.system == system.name) & (pairs.label_set == label_set)].set_index("metric").value
            expected = brute_pair_map(cube, positives[label_set], excluded, K)
            assert got["MAP@K"] == pytest.approx(expected, rel=1e-9, abs=1e-12), (system.name, label_set)
        prop = protocols.property
        for label_set in ("sparse", "completed"):
            got = prop[(prop.system == system.name) & (prop.label_set == label_set)].set_index("metric").value
            mrr, count = brute_property_mrr(cube, positives[label_set], arrays["train"])
            assert got["questions"] == count and count > 0
            assert got["MRR"] == pytest.approx(mrr, rel=1e-9), (system.name, label_set)

    # tau between link prediction and pair ranking on the completed labels: scipy on the two orderings
    names = [s.name for s in data.systems]
    lp = [result.tables["completed"].loc[n, "micro_MRR"] for n in names]
    pr = [pairs[(pairs.system == n) & (pairs.label_set == "completed") & (pairs.metric == "MAP@K")].value.iloc[0]
          for n in names]
    row = protocols.kendall[(protocols.kendall.ordering_a == "link prediction (completed)")
                            & (protocols.kendall.ordering_b == "pair ranking (completed)")].iloc[0]
    assert row.systems == 2
    assert row.tau == pytest.approx(kendalltau(lp, pr).statistic) or (np.isnan(row.tau) and np.isnan(
        kendalltau(lp, pr).statistic))


def check_report_exports_and_page(evaluated, tmp_path):
    from django.contrib.auth.models import User
    from django.test import Client

    from evaluation.services.evaluate import create_run, format_tables, store_result, write_outputs

    data, campaign, systems, options, result = evaluated
    files = write_outputs(result, tmp_path / "out")
    for name in ("classification.csv", "pair_ranking.csv", "property.csv", "protocol_kendall.csv",
                 "protocol_status.csv", "classification_curves.png", "pair_ranking_relations.png",
                 "protocol_kendall.png"):
        assert name in files and (tmp_path / "out" / name).stat().st_size > 0, name
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {row["metric"] for row in summary["protocols"]["pair_ranking"]} >= {"MAP@K", "P@K", "WMAP@K", "WP@K"}
    text = format_tables(result)
    assert "== triple classification ==" in text and "as-matrix / pair_ranking: not computed: " in text

    run = create_run(data.sample, systems=systems, campaign=campaign, options=options)
    store_result(run, result)
    client = Client()
    client.force_login(User.objects.create_user("staff", is_staff=True))
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    for heading in ("Protocols beyond link prediction: computed or not", "Triple classification (sparse vs completed",
                    f"Entity-pair ranking, K = {K}", "Property prediction (sparse vs completed",
                    "Kendall's tau-b between protocols"):
        assert heading in page, heading
    assert "not computed: the score matrix" in page
    assert "MAP@K (sparse)" in page and "MAP@K (completed)" in page
    assert "classification_curves.png" in page and "ROC curve" in page
