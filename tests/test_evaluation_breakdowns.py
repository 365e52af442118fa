"""New report tables checked against brute force from the models' scores: per relation, averages over relations
and domains, sparse relation-mix reweighting, macro per category, p-MRR / log-MRR, open-world simulation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from tests._evaluation_support import answers_of, brute_rank, build_campaign, full_scores
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def _brute_rankings(system, label_triples: dict, sq, arrays, dropped: set = frozenset()) -> pd.DataFrame:
    """One row per (question, positive answer): relation, side, realistic micro rank, macro rank (filter train +
    valid only), in question / answer order. ``dropped`` answers are neither evaluated nor filtered."""
    scores = full_scores(system, sq.questions)
    known = [tuple(x) for split in ("train", "valid", "test") for x in arrays[split].tolist()]
    train_valid = [tuple(x) for split in ("train", "valid") for x in arrays[split].tolist()]
    positives = [t for t, y in label_triples.items() if y]
    rows = []
    for row in range(len(sq)):
        side, rel, anchor = int(sq.questions.side[row]), int(sq.questions.relation[row]), int(sq.questions.anchor[row])
        pos = answers_of(positives, side, rel, anchor)
        drop = {e for e in pos if (row, e) in dropped}
        micro_filter = (answers_of(known, side, rel, anchor) | pos) - drop
        macro_filter = answers_of(train_valid, side, rel, anchor)
        for answer in sorted(pos - drop):
            rows.append({"question": row, "relation": rel, "side": side,
                         "rank": brute_rank(scores[row], answer, micro_filter),
                         "macro_rank": brute_rank(scores[row], answer, macro_filter - {answer})})
    return pd.DataFrame(rows)


def test_breakdowns_reweighting_and_open_world_match_brute_force(storage, tmp_path):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample, write_outputs
    from evaluation.services.labels import JudgmentsFile
    from pooling.selectors.kg import kg_relation_categories, kg_relation_keys, kg_triples
    from pooling.selectors.pools import sample_questions, sample_triples
    from pooling.selectors.questions import label_questions

    campaign = build_campaign(tmp_path)
    fractions, repeats = (0.0, 0.3), 2
    options = EvaluationOptions(open_world_fractions=fractions, open_world_repeats=repeats, n_draws=5,
                                dp_test="bootstrap", n_bootstrap=200)
    result = evaluate_sample(campaign.sample, systems=campaign.systems, source=JudgmentsFile(campaign.judgments),
                             options=options)
    sample_sq = sample_questions(campaign.sample)
    arrays = kg_triples(campaign.kg)
    rel_keys = kg_relation_keys(campaign.kg)
    categories = {i: c for i, (_k, c, _a, _b) in enumerate(kg_relation_categories(campaign.kg))}
    asked = set(zip(sample_sq.questions.side.tolist(), sample_sq.questions.relation.tolist(),
                    sample_sq.questions.anchor.tolist()))
    completed = {t: y for t, y in campaign.judged.items() if (0, t[1], t[2]) in asked or (1, t[1], t[0]) in asked}
    # the questions ranked: the sample's, then the other side of every positive (SPEC 5.2: both sides of every
    # labelled triple), in the evaluation's row order (the open-world draws index its rankings)
    sq = label_questions(campaign.sample, np.array([t for t, y in completed.items() if y]))
    sparse = {tuple(t): True for t in sample_triples(campaign.sample).tolist()}
    sparse_weights = pd.Series([r for _h, r, _t in sparse]).value_counts(normalize=True)
    names = [s.name for s in campaign.systems]
    brute = {}
    for system in campaign.systems:
        for set_name, labels in (("sparse", sparse), ("completed", completed)):
            frame = _brute_rankings(system, labels, sq, arrays)
            brute[system.name, set_name] = frame
            ranks = frame["rank"].to_numpy()
            row = result.tables[set_name].loc[system.name]
            # p-MRR and log-MRR next to PROBE
            for column, p in (("pMRR_1/4", 0.25), ("pMRR_1/3", 1 / 3), ("pMRR_1/2", 0.5), ("pMRR_3/4", 0.75)):
                assert row[column] == pytest.approx(np.mean(ranks ** -p), rel=1e-12)
            assert row["logMRR"] == pytest.approx(np.mean(np.log(2) / np.log(ranks + 1)), rel=1e-12)
            # per relation
            rel_table = result.relations[(result.relations.label_set == set_name)
                                         & (result.relations.system == system.name)].set_index("relation")
            per_rel = frame.assign(rr=1 / frame["rank"]).groupby("relation")["rr"].agg(["mean", "size"])
            assert len(rel_table) == len(per_rel)
            for rel, values in per_rel.iterrows():
                assert rel_table.loc[rel_keys[rel], "micro_MRR"] == pytest.approx(values["mean"], rel=1e-12)
                assert rel_table.loc[rel_keys[rel], "count"] == values["size"]
                assert rel_table.loc[rel_keys[rel], "category"] == categories[rel]
            # averages over relations / domains (UMLS relation names have one path segment: domain = relation)
            avg = result.averages[(result.averages.label_set == set_name) & (result.averages.system == system.name)
                                  & (result.averages.metric == "micro_MRR")].set_index("average")["value"]
            assert avg["relations"] == pytest.approx(per_rel["mean"].mean(), rel=1e-12)
            domains = frame.assign(rr=1 / frame["rank"], d=[rel_keys[r].strip("/").split("/")[0] for r in frame.relation])
            assert avg["domains"] == pytest.approx(domains.groupby("d")["rr"].mean().mean(), rel=1e-12)
        # reweighting: completed per-relation means, weighted by the sparse relation shares
        frame = brute[system.name, "completed"]
        per_rel = frame.assign(rr=1 / frame["rank"]).groupby("relation")["rr"].mean()
        expected = float(sum(w * per_rel[r] for r, w in sparse_weights.items()))
        assert result.reweighted.loc[system.name, "micro_MRR"] == pytest.approx(expected, rel=1e-12)
        # the sparse set reweighted with its own distribution is the plain sparse micro MRR
        sparse_frame = brute[system.name, "sparse"]
        sp = sparse_frame.assign(rr=1 / sparse_frame["rank"]).groupby("relation")["rr"].mean()
        assert float(sum(w * sp[r] for r, w in sparse_weights.items())) == pytest.approx(
            result.tables["sparse"].loc[system.name, "micro_MRR"], rel=1e-12)
        # macro MRR per category x side: mean over questions of 1 / best macro rank
        best = frame.groupby("question").agg(best=("macro_rank", "min"), relation=("relation", "first"),
                                             side=("side", "first"))
        best["group"] = [f"{categories[r]}/{'head' if s == 0 else 'tail'}" for r, s in zip(best.relation, best.side)]
        macro = result.breakdown[(result.breakdown.label_set == "completed") & (result.breakdown.system == system.name)
                                 & (result.breakdown.metric == "macro_MRR")].set_index("group")
        for group, values in best.groupby("group"):
            assert macro.loc[group, "value"] == pytest.approx(np.mean(1 / values["best"]), abs=1e-6), group
            assert macro.loc[group, "count"] == len(values)
    tau = result.reweighted_kendall.loc["micro_MRR"]
    assert tau["tau_sparse_vs_reweighted"] == pytest.approx(scipy.stats.kendalltau(
        result.tables["sparse"]["micro_MRR"], result.reweighted["micro_MRR"]).statistic)
    assert tau["tau_sparse_vs_completed"] == pytest.approx(result.kendall.loc["micro_MRR", "tau"])

    # open world: redraw the simulation's masks (same seeded generator) and recompute with brute force
    ow = result.open_world.set_index(["drop_fraction", "metric"])
    assert ow.loc[(0.0, "micro_MRR"), "mean_tau"] == pytest.approx(1.0)
    answers = [(q, a) for q, a in _answer_pairs(completed, sq)]
    rng = np.random.default_rng(options.seed)
    closed = [result.tables["completed"].loc[n, "micro_MRR"] for n in names]
    closed_macro = [np.mean(1 / brute[n, "completed"].groupby("question")["macro_rank"].min()) for n in names]
    for fraction in fractions:
        taus, taus_macro = [], []
        for _ in range(repeats):
            kept = np.ones(len(answers), dtype=bool)
            kept[rng.choice(len(answers), size=int(np.rint(fraction * len(answers))), replace=False)] = False
            dropped = {answers[i] for i in np.flatnonzero(~kept)}
            micro, macro = [], []
            for system in campaign.systems:
                frame = _brute_rankings(system, completed, sq, arrays, dropped)
                micro.append(np.mean(1 / frame["rank"]))
                macro.append(np.mean(1 / frame.groupby("question")["macro_rank"].min()))
            taus.append(scipy.stats.kendalltau(closed, micro).statistic)
            taus_macro.append(scipy.stats.kendalltau(closed_macro, macro).statistic)
        assert ow.loc[(fraction, "micro_MRR"), "mean_tau"] == pytest.approx(np.nanmean(taus))
        assert ow.loc[(fraction, "macro_MRR"), "mean_tau"] == pytest.approx(np.nanmean(taus_macro))

    # bootstrap discriminative power: one row per metric and label set, p-values in [0, 1]
    assert set(result.discriminative_auc["test"]) == {"bootstrap"}
    assert result.discriminative_power["pvalue"].between(0, 1).all()
    files = write_outputs(result, tmp_path / "out")
    for name in ("relations.csv", "averages.csv", "reweighted.csv", "reweighted_kendall.csv", "open_world.csv",
                 "open_world.png", "reweighted.png", "data_sensitivity.png"):
        assert name in files and (tmp_path / "out" / name).stat().st_size > 0
    reread = pd.read_csv(tmp_path / "out" / "relations.csv")
    assert len(reread) == len(result.relations)


def _answer_pairs(completed: dict, sq):
    """(question row, answer) of every positive in question / answer order (the order of the micro rankings)."""
    positives = [t for t, y in completed.items() if y]
    for row in range(len(sq)):
        side, rel, anchor = int(sq.questions.side[row]), int(sq.questions.relation[row]), int(sq.questions.anchor[row])
        for answer in sorted(answers_of(positives, side, rel, anchor)):
            yield row, answer
