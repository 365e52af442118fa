"""evaluate_sample on a tiny UMLS campaign, checked against independent computations."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from tests._evaluation_support import answers_of, brute_rank, build_campaign, full_scores
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db

MEASURES = {"macro_MRR": "recip_rank", "macro_Hits@1": "success_1", "macro_Hits@3": "success_3",
            "macro_Hits@10": "success_10", "macro_MAP@10": "map_cut_10", "macro_nDCG@10": "ndcg_cut_10",
            "macro_P@10": "P_10", "macro_bpref": "bpref", "macro_infAP": "infAP"}


def _reference(campaign, system, label_triples: dict, arrays):
    """Brute-force micro ranks (answer-wise) and pytrec_eval macro values for one system and label set.

    The questions are both sides of every positive triple (SPEC 5.2: the head and the tail ranking of every labelled
    triple; for the sparse labels exactly the sample's questions), each ranked from the model's full scores."""
    from pooling.engine.questions import Questions

    import pytrec_eval
    known = [tuple(x) for split in ("train", "valid", "test") for x in arrays[split].tolist()]
    train_valid = [tuple(x) for split in ("train", "valid") for x in arrays[split].tolist()]
    positives = [t for t, y in label_triples.items() if y]
    negatives = [t for t, y in label_triples.items() if not y]
    asked = sorted({(0, r, t) for h, r, t in positives} | {(1, r, h) for h, r, t in positives})
    questions = Questions(np.array([a for _s, _r, a in asked]), np.array([r for _s, r, _a in asked]),
                          np.array([s for s, _r, _a in asked]))
    scores = full_scores(system, questions)
    micro_ranks, qrels, run = [], {}, {}
    for row, (side, rel, anchor) in enumerate(asked):
        pos = answers_of(positives, side, rel, anchor)
        neg = answers_of(negatives, side, rel, anchor)
        micro_filter = answers_of(known, side, rel, anchor) | pos
        for answer in sorted(pos):
            micro_ranks.append(brute_rank(scores[row], answer, micro_filter))
        macro_filter = answers_of(train_valid, side, rel, anchor)
        qid = f"q{row}"
        qrels[qid] = {**{f"e{e}": 1 for e in pos}, **{f"e{e}": 0 for e in neg}}
        run[qid] = {f"e{e}": float(scores[row, e]) for e in range(scores.shape[1])
                    if e not in macro_filter or e in pos or e in neg}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "success.1,3,10", "map_cut.10", "ndcg_cut.10",
                                                       "P.10", "bpref", "infAP"})
    per_query = evaluator.evaluate(run)
    macro = {column: float(np.mean([per_query[q][name] for q in qrels])) for column, name in MEASURES.items()}
    # every answer is ranked (full rankings), so the first answer's rank is 1 / recip_rank
    macro["macro_MR"] = float(np.mean([1.0 / per_query[q]["recip_rank"] for q in qrels]))
    assert len(micro_ranks) == 2 * len(positives)
    return np.array(micro_ranks), macro, scores


def test_metrics_match_brute_force_and_pytrec_eval(storage, tmp_path):
    from evaluation.services.evaluate import evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from pooling.selectors.kg import kg_triples
    from pooling.selectors.pools import sample_questions, sample_triples

    campaign = build_campaign(tmp_path)
    result = evaluate_sample(campaign.sample, systems=campaign.systems, source=JudgmentsFile(campaign.judgments))
    names = [s.name for s in campaign.systems]
    assert result.systems == names
    assert set(result.tables) == {"sparse", "completed", "completed@0", "completed@1", "completed@2", "completed@3"}

    sq = sample_questions(campaign.sample)
    arrays = kg_triples(campaign.kg)
    sparse_labels = {tuple(t): True for t in sample_triples(campaign.sample).tolist()}
    asked = set(zip(sq.questions.side.tolist(), sq.questions.relation.tolist(), sq.questions.anchor.tolist()))
    completed_labels = {t: y for t, y in campaign.judged.items() if (0, t[1], t[2]) in asked or (1, t[1], t[0]) in asked}
    assert result.label_stats["completed"]["judged_ignored"] == 1
    assert result.label_stats["completed"]["triples"] == len(completed_labels)

    for system in campaign.systems:
        for set_name, labels in (("sparse", sparse_labels), ("completed", completed_labels)):
            micro, macro, scores = _reference(campaign, system, labels, arrays)
            row = result.tables[set_name].loc[system.name]
            assert row["micro_MRR"] == pytest.approx(np.mean(1.0 / micro), rel=1e-12)
            assert row["micro_MR"] == pytest.approx(np.mean(micro), rel=1e-12)
            assert row["micro_Hits@10"] == pytest.approx(np.mean(micro <= 10), rel=1e-12)
            for column, value in macro.items():
                assert row[column] == pytest.approx(value, abs=1e-4), (system.name, set_name, column)
        # micro rankings: two per positive triple (its head and its tail ranking)
        assert result.label_stats["sparse"]["micro_rankings"] == 2 * campaign.sample.size
        assert result.label_stats["completed"]["micro_rankings"] == 2 * sum(completed_labels.values())

    # Kendall's tau-b = scipy on the two tables, per metric
    for metric, tau in result.kendall["tau"].items():
        expected = scipy.stats.kendalltau(result.tables["sparse"][metric], result.tables["completed"][metric]).statistic
        assert (np.isnan(tau) and np.isnan(expected)) or tau == pytest.approx(expected)
    # completed at the pool's full depth = completed (every judged triple is a pool entry or sampled)
    np.testing.assert_allclose(result.tables["completed@3"].to_numpy(), result.tables["completed"].to_numpy())
    # completed at depth 0 = sparse (the sampled triples are all judged Y)
    np.testing.assert_allclose(result.tables["completed@0"].to_numpy(), result.tables["sparse"].to_numpy())
    assert list(result.depth_curve.index) == [0, 1, 2, 3]
    assert np.allclose(result.depth_curve.loc[3].dropna(), result.kendall["tau"].reindex(result.depth_curve.columns).dropna())
    # breakdown per category x side covers every micro ranking
    sub = result.breakdown[(result.breakdown.label_set == "sparse") & (result.breakdown.metric == "micro_MRR")
                           & (result.breakdown.system == names[0]) & ~result.breakdown.group.str.startswith("all/")]
    assert sub["count"].sum() == 2 * campaign.sample.size
    # PROBE grids: alpha=1, beta=0 column equals the table's PROBE
    assert np.allclose(result.probe_alpha["completed"]["alpha=1"], result.tables["completed"]["PROBE"])
    heat = np.asarray(result.probe_heatmap["completed"]["values"])
    assert heat.shape == (5, 5, 3) and heat.min() >= 0 and heat.max() <= 1
    assert not result.discriminative_auc.empty and not result.data_sensitivity.empty


def test_rank_cache_recomputes_only_new_pairs(storage, tmp_path):
    from evaluation.services.evaluate import evaluate_sample
    from evaluation.services.labels import JudgmentsFile

    campaign = build_campaign(tmp_path, architectures=("distmult", "transe"))
    first = evaluate_sample(campaign.sample, source=JudgmentsFile(campaign.judgments))
    assert all(stats["computed"] > 0 and stats["cached"] == 0 for stats in first.rank_stats.values())
    second = evaluate_sample(campaign.sample, source=JudgmentsFile(campaign.judgments))
    assert all(stats["computed"] == 0 for stats in second.rank_stats.values())
    for name in first.tables:
        np.testing.assert_array_equal(first.tables[name].to_numpy(), second.tables[name].to_numpy())
    # one more judged triple: only that pair is scored
    from pooling.selectors.pools import entity_keys, sample_questions
    from pooling.selectors.kg import kg_relation_keys, kg_triples

    sq = sample_questions(campaign.sample)
    arrays = kg_triples(campaign.kg)
    known = {tuple(x) for split in arrays.values() for x in split.tolist()}
    row = 0
    anchor, relation = int(sq.questions.anchor[row]), int(sq.questions.relation[row])
    new = next((e, relation, anchor) for e in range(campaign.kg.num_entities)
               if (e, relation, anchor) not in known and (e, relation, anchor) not in campaign.judged)
    ents, rels = entity_keys(campaign.kg), kg_relation_keys(campaign.kg)
    with open(campaign.judgments, "a", encoding="utf-8") as stream:
        stream.write(f"{ents[new[0]]}\t{rels[new[1]]}\t{ents[new[2]]}\tY\n")
    third = evaluate_sample(campaign.sample, source=JudgmentsFile(campaign.judgments))
    # the new positive's other side is a question the evaluation may not have ranked yet (SPEC 5.2 ranks both
    # sides): then its test answers and labelled entities are scored too, once
    head = new[0]
    positives = [t for t, y in campaign.judged.items() if y]
    asked = {(0, r, t) for h, r, t in positives} | {(1, r, h) for h, r, t in positives}
    asked |= set(zip(sq.questions.side.tolist(), sq.questions.relation.tolist(), sq.questions.anchor.tolist()))
    other_side = set() if (1, relation, head) in asked else (
        {t for h, r, t in arrays["test"].tolist() if (h, r) == (head, relation)}
        | {t for h, r, t in list(campaign.judged) + [new] if (h, r) == (head, relation)})
    assert all(stats["computed"] == 1 + len(other_side) for stats in third.rank_stats.values())
    assert third.label_stats["completed"]["unknown_depth"] == 1  # not a pool entry: left out of completed@d
    assert third.label_stats["completed"]["positives"] == first.label_stats["completed"]["positives"] + 1


def test_imported_full_run_matches_trained_micro(storage, tmp_path):
    """A TREC run holding every entity's score of a trained model evaluates like the model (micro metrics)."""
    from evaluation.services.evaluate import evaluate_sample
    from evaluation.services.labels import JudgmentsFile
    from pooling.selectors.pools import entity_keys
    from pooling.services.rankings import import_run

    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.questions import label_questions

    campaign = build_campaign(tmp_path, architectures=("distmult", "transe"))
    # the runs answer the questions of the completed labels (the questions export: the sample's questions and the
    # other side of every positive pool triple), named in a questions file
    positives = np.array([t for t, y in campaign.judged.items() if y])
    sq = label_questions(campaign.sample, positives)
    trained = campaign.systems[0]
    scores = full_scores(trained, sq.questions)
    ents, rels = entity_keys(campaign.kg), kg_relation_keys(campaign.kg)
    questions_file = tmp_path / "questions.tsv"
    questions_file.write_text("".join(f"{qid}\t{ents[sq.questions.anchor[row]]}\t{rels[sq.questions.relation[row]]}\n"
                                      for row, qid in enumerate(sq.qids)))
    full_run, short_run = tmp_path / "full.run", tmp_path / "short.run"
    from pooling.selectors.pools import question_filter

    known = question_filter(campaign.kg, sq.questions)  # train + valid + test answers
    with open(full_run, "w") as full, open(short_run, "w") as short:
        for row, qid in enumerate(sq.qids):
            order = np.argsort(-scores[row], kind="stable")
            unknown_seen = 0
            for position, e in enumerate(order.tolist()):
                line = f"{qid} Q0 {ents[e]} {position + 1} {float(scores[row, e])!r} run\n"
                full.write(line)
                if unknown_seen < 5:  # the filtered top-5 (and the known answers above it)
                    short.write(line)
                unknown_seen += e not in set(known.row(row).tolist())
    imported = import_run(campaign.sample, full_run, name="imported-full", questions_path=questions_file)
    truncated = import_run(campaign.sample, short_run, name="imported-top5", questions_path=questions_file)
    result = evaluate_sample(campaign.sample, systems=[trained, imported, truncated],
                             source=JudgmentsFile(campaign.judgments))
    for set_name in ("sparse", "completed"):
        table = result.tables[set_name]
        for metric in ("micro_MRR", "micro_MR", "micro_Hits@1", "micro_Hits@10", "PROBE"):
            assert table.loc["imported-full", metric] == pytest.approx(table.loc[trained.name, metric], rel=1e-9)
        # top-5 run: macro Hits@1/@3 (within the run) agree; ranks beyond the run are not retrieved
        assert table.loc["imported-top5", "macro_Hits@3"] == pytest.approx(table.loc["imported-full", "macro_Hits@3"])
        assert table.loc["imported-top5", "macro_MRR"] <= table.loc["imported-full", "macro_MRR"] + 1e-12
        assert table.loc["imported-top5", "micro_MR"] >= table.loc["imported-full", "micro_MR"]
