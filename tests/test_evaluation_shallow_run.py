"""A TREC run deep enough to hold every judged entity evaluates exactly like the full scores; a shallow run gets
trec_eval's semantics for macro metrics (an entity outside the run is not retrieved, a question outside it scores
0), the documented convention for micro metrics (ranked below the run, tied with the other unretrieved entities),
and the report says per system how many answers / judged entities / questions the run was too shallow for."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tests._evaluation_support import (
    brute_rank, build_campaign, exported_questions, full_scores, judged_campaign, write_run,
)
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def _qrels(campaign) -> dict[str, dict[str, int]]:
    from annotation.services.exports import export_judgments

    out = io.StringIO()
    export_judgments(campaign, "qrels", out)
    qrels: dict[str, dict[str, int]] = {}
    for line in out.getvalue().splitlines():
        qid, _zero, entity, rel = line.split(" ")
        qrels.setdefault(qid, {})[entity] = int(rel)
    return qrels


def test_deep_enough_run_equals_full_scores_and_shallow_run_is_counted(storage, tmp_path, client, django_user_model):
    import pytrec_eval
    from evaluation.services.evaluate import (
        EvaluationOptions, create_run, evaluate_sample, format_tables, store_result, write_outputs,
    )
    from evaluation.services.labels import CampaignLabels
    from pooling.selectors.kg import kg_triples
    from pooling.selectors.pools import entity_keys, sample_questions
    from pooling.services.rankings import import_run

    data = build_campaign(tmp_path, architectures=("distmult", "transe"))
    trained = data.systems[0]
    campaign = judged_campaign(data)
    qids, questions = exported_questions(campaign, tmp_path / "questions.tsv")
    scores = full_scores(trained, questions)
    names = entity_keys(data.kg)
    index_of = {key: i for i, key in enumerate(names)}
    qrels = _qrels(campaign)
    assert set(qrels) == set(qids)

    # deep enough: every question cut right after its deepest judged entity (every judged entity is in the run)
    def deepest_judged(row, order):
        judged = {index_of[e] for e in qrels[qids[row]]}
        return 1 + max(position for position, e in enumerate(order.tolist()) if e in judged)

    write_run(tmp_path / "deep.run", qids, scores, names, keep=deepest_judged)
    deep_lines = sum(1 for _ in open(tmp_path / "deep.run"))
    assert deep_lines < len(qids) * data.kg.num_entities  # really cut
    # shallow: the sample's questions only, top 5 each
    sample_qids = set(sample_questions(data.sample).qids)
    asked = [row for row, qid in enumerate(qids) if qid in sample_qids]
    write_run(tmp_path / "top5.run", [qids[row] for row in asked], scores[asked], names, depth=5)
    deep = import_run(data.sample, tmp_path / "deep.run", name="deep", questions_path=tmp_path / "questions.tsv")
    top5 = import_run(data.sample, tmp_path / "top5.run", name="top5")
    result = evaluate_sample(data.sample, systems=[trained, deep, top5], source=CampaignLabels(campaign),
                             options=EvaluationOptions(analyses=False))

    for set_name, table in result.tables.items():
        for metric in table.columns:
            assert table.loc["deep", metric] == table.loc[trained.name, metric], (set_name, metric)

    # the shallow run's counts, from the exported qrels and the run file
    run: dict[str, set[str]] = {}
    for line in open(tmp_path / "top5.run"):
        qid, _q0, entity, *_rest = line.split()
        run.setdefault(qid, set()).add(entity)
    coverage = result.coverage.set_index(["label_set", "system"])
    expected = {
        "questions": len(qrels),
        "questions_not_scored": sum(qid not in run for qid in qrels),
        "answers": sum(rel for judged in qrels.values() for rel in judged.values()),
        "answers_unranked": sum(1 for qid, judged in qrels.items() for e, rel in judged.items()
                                if rel and e not in run.get(qid, ())),
        "judged": sum(len(judged) for judged in qrels.values()),
        "judged_unranked": sum(1 for qid, judged in qrels.items() for e in judged if e not in run.get(qid, ())),
    }
    assert expected["questions_not_scored"] > 0 and expected["answers_unranked"] > 0
    assert coverage.loc[("completed", "top5")].to_dict() == expected
    for system in (trained.name, "deep"):
        assert coverage.loc[("completed", system)].to_dict() == {
            **expected, "questions_not_scored": 0, "answers_unranked": 0, "judged_unranked": 0}

    # micro: an answer outside the run ranks below the run, tied with the other unretrieved candidates
    arrays = kg_triples(data.kg)
    known = {tuple(t) for split in arrays.values() for t in split.tolist()}
    train_valid = {tuple(t) for split in ("train", "valid") for t in arrays[split].tolist()}
    micro, macro_run = [], {}
    for row, qid in enumerate(qids):
        side, relation, anchor = int(questions.side[row]), int(questions.relation[row]), int(questions.anchor[row])
        masked = np.where([e in run.get(qid, ()) for e in names], scores[row].astype(np.float64), -np.inf)
        answers_of = lambda triples: {h if side == 0 else t for h, r, t in triples  # noqa: E731
                                      if r == relation and (t if side == 0 else h) == anchor}
        positives = {index_of[e] for e, rel in qrels[qid].items() if rel}
        for answer in sorted(positives):
            micro.append(brute_rank(masked, answer, answers_of(known) | positives))
        # trec_eval on the run as imported: train + valid answers filtered (SPEC 5.3), unretrieved left out
        tv = answers_of(train_valid)
        macro_run[qid] = {names[e]: float(masked[e]) for e in range(len(names))
                          if masked[e] > -np.inf and (e not in tv or names[e] in qrels[qid])}
    table = result.tables["completed"]
    assert table.loc["top5", "micro_MR"] == pytest.approx(np.mean(micro), rel=1e-12)
    assert table.loc["top5", "micro_MRR"] == pytest.approx(np.mean(1 / np.array(micro)), rel=1e-12)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.10"}).evaluate(
        {qid: docs for qid, docs in macro_run.items() if docs})
    for column, measure in (("macro_MRR", "recip_rank"), ("macro_nDCG@10", "ndcg_cut_10")):
        # trec_eval -c: a question the run does not answer counts 0
        reference = np.mean([per_query[qid][measure] if qid in per_query else 0.0 for qid in qrels])
        assert table.loc["top5", column] == pytest.approx(reference, abs=1e-12), column

    # the report says it: files, command-line tables, the page
    files = write_outputs(result, tmp_path / "report", figures=False)
    assert "coverage.csv" in files
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    row = next(r for r in summary["coverage"] if r["label_set"] == "completed" and r["system"] == "top5")
    assert row["answers_unranked"] == expected["answers_unranked"]
    text = format_tables(result)
    assert (f"top5 on completed: too shallow for {expected['answers_unranked']} of {expected['answers']} answers"
            in text)
    assert "deep on" not in text
    evaluation = store_result(create_run(data.sample, systems=[trained, deep, top5], campaign=campaign), result,
                              figures=False)
    client.force_login(django_user_model.objects.create_user("boss", password="pw", is_staff=True))
    page = client.get(f"/evaluation/{evaluation.pk}/").content.decode()
    assert "too shallow" in page
    assert f"{expected['answers_unranked']} of {expected['answers']}" in page
