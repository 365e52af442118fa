"""Campaign labels as a label source: same results as the equivalent judgments file; gold and undecided never count."""
from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tests._evaluation_support import build_campaign
from tests._pool_support import storage  # noqa: F401

pytestmark = pytest.mark.django_db


def _judge_campaign(campaign_data, name="camp"):
    """A campaign over the pool: every item decided from the synthetic judgments except 3 left pending, plus a
    gold check (labelled Y) that answers a sampled question. Returns (campaign, reference judgments file)."""
    from annotation.models import Item
    from annotation.services.campaigns import create_campaign
    from pooling.models import Entity, Relation
    from pooling.selectors.kg import kg_relation_keys, kg_triples
    from pooling.selectors.pools import entity_keys, sample_questions

    campaign = create_campaign(name, campaign_data.pool, gold_rate=0.0)
    kg = campaign_data.kg
    ent_index = dict(Entity.objects.filter(kg=kg).values_list("pk", "index"))
    rel_index = dict(Relation.objects.filter(kg=kg).values_list("pk", "index"))
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    pending = {item.pk for item in items[:3]}
    decided = {}
    for item in items:
        if item.pk in pending:
            continue
        triple = (ent_index[item.head_id], rel_index[item.relation_id], ent_index[item.tail_id])
        label = "Y" if campaign_data.judged[triple] else "N"
        item.status, item.label, item.label_origin = Item.Status.AGREED, label, Item.Origin.UNANIMOUS
        decided[triple] = label
    Item.objects.bulk_update(items, ["status", "label", "label_origin"])
    # gold check: a new answer of the first sampled question, labelled Y -- must not count
    sq = sample_questions(campaign_data.sample)
    arrays = kg_triples(kg)
    known = {tuple(x) for split in arrays.values() for x in split.tolist()}
    side, rel, anchor = int(sq.questions.side[0]), int(sq.questions.relation[0]), int(sq.questions.anchor[0])
    for e in range(kg.num_entities):
        triple = (e, rel, anchor) if side == 0 else (anchor, rel, e)
        if triple not in known and triple not in campaign_data.judged:
            break
    entity_pk = {v: k for k, v in ent_index.items()}
    relation_pk = {v: k for k, v in rel_index.items()}
    Item.objects.create(campaign=campaign, head_id=entity_pk[triple[0]], relation_id=relation_pk[triple[1]],
                        tail_id=entity_pk[triple[2]], is_gold=True, gold_answer="Y", label="Y",
                        status=Item.Status.AGREED)
    ents, rels = entity_keys(kg), kg_relation_keys(kg)
    reference = campaign_data.judgments.parent / f"{name}-reference.tsv"
    from pooling.selectors.pools import sample_triples

    rows = {tuple(t): "Y" for t in sample_triples(campaign_data.sample).tolist()}
    rows.update(decided)
    reference.write_text("".join(f"{ents[h]}\t{rels[r]}\t{ents[t]}\t{y}\n" for (h, r, t), y in rows.items()))
    return campaign, reference, triple


def test_campaign_labels_equal_the_judgments_file(storage, tmp_path, capsys):
    from evaluation.services.evaluate import EvaluationOptions, evaluate_sample
    from evaluation.services.labels import CampaignLabels, JudgmentsFile

    data = build_campaign(tmp_path, architectures=("distmult", "transe"))
    campaign, reference, gold = _judge_campaign(data)
    judged = CampaignLabels(campaign).judged_triples(data.kg)
    assert gold not in {tuple(t) for t in judged.triples.tolist()}
    options = EvaluationOptions(analyses=False)
    from_campaign = evaluate_sample(data.sample, systems=data.systems, source=CampaignLabels(campaign), options=options)
    from_file = evaluate_sample(data.sample, systems=data.systems, source=JudgmentsFile(reference), pool=data.pool,
                                options=options)
    assert set(from_campaign.tables) == set(from_file.tables) >= {"completed@3", "completed"}
    for name in from_file.tables:
        np.testing.assert_allclose(from_campaign.tables[name].to_numpy(), from_file.tables[name].to_numpy())
    for key in ("positives", "negatives", "unknown_depth"):
        assert from_campaign.label_stats["completed"][key] == from_file.label_stats["completed"][key]
    assert from_campaign.label_stats["completed"]["source"] == "campaign camp"
    # three undecided items are left out: completed has 3 fewer triples than the pool + sample
    from pooling.selectors.pools import pool_entry_array, sample_triples

    pool_and_sample = {tuple(t) for t in sample_triples(data.sample).tolist()}
    pool_and_sample |= {(h, r, t) for h, r, t, _d in pool_entry_array(data.pool).tolist()}
    stats = from_campaign.label_stats["completed"]
    assert stats["positives"] + stats["negatives"] == len(pool_and_sample) - 3
    assert stats["unknown_depth"] == 0  # every decided triple is a pool entry or sampled: its depth is known

    out = tmp_path / "out"
    call_command("evaluate", data.sample.name, campaign="camp", out=str(out), no_figures=True, no_analyses=True,
                 save=True)
    assert "== completed labels ==" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["label_sets"]["completed"]["positives"] == from_file.label_stats["completed"]["positives"]
    from evaluation.models import EvaluationRun

    run = EvaluationRun.objects.get()
    assert run.campaign == campaign and run.status == EvaluationRun.Status.DONE
    with pytest.raises(CommandError, match="no campaign named 'nope'"):
        call_command("evaluate", data.sample.name, campaign="nope")
    with pytest.raises(CommandError, match="not both"):
        call_command("evaluate", data.sample.name, campaign="camp", labels=str(reference))
    from pooling.services.samples import draw_sample

    other = draw_sample(data.kg, size=5, seed=9)
    with pytest.raises(CommandError, match="not sample"):
        call_command("evaluate", other.name, campaign="camp")


def test_campaign_run_from_the_page_rerun_recomputes_only_changes(storage, tmp_path, client, django_user_model,
                                                                 django_capture_on_commit_callbacks):
    from annotation.models import Item
    from evaluation.models import EvaluationRun

    data = build_campaign(tmp_path, architectures=("distmult", "transe"))
    campaign, _reference, _gold = _judge_campaign(data)
    staff = django_user_model.objects.create_user("boss", password="pw", is_staff=True)
    client.force_login(staff)
    bad = client.post("/evaluation/new/", {"sample": data.sample.pk, "campaign": campaign.pk, "policy": "realistic",
                                           "labels_file": str(_reference), "dp_test": "t"})
    assert bad.status_code == 200 and "not both" in bad.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/new/", {"sample": data.sample.pk, "campaign": campaign.pk,
                                                    "policy": "realistic", "dp_test": "bootstrap", "open_world": "on"})
    assert response.status_code == 302
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.DONE, run.error
    assert run.campaign == campaign and run.options["dp_test"] == "bootstrap"
    assert all(s["computed"] > 0 for s in run.summary["rank_stats"].values())
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert "campaign camp" in page and "Sakai" in page and "Open-world simulation" in page and "Re-run" in page
    for name in ("relations.csv", "averages.csv", "reweighted.csv", "reweighted_kendall.csv", "open_world.csv",
                 "discriminative_auc.csv", "open_world.png", "reweighted.png"):
        assert name in run.files, name
        assert client.get(f"/evaluation/{run.pk}/files/{name}").status_code == 200
    # re-run, nothing changed: nothing recomputed
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/evaluation/{run.pk}/rerun/").status_code == 302
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.DONE and run.stage == "unchanged"
    # one pending item gets decided: re-run scores exactly the new pairs, recomputes the tables
    from annotation.selectors.labels import completed_labels
    from pooling.selectors.kg import kg_triples

    before = {(x.head, x.relation, x.tail): x.label for x in completed_labels(campaign)}
    item = Item.objects.filter(campaign=campaign, status=Item.Status.PENDING).first()
    item.status, item.label = Item.Status.AGREED, "Y"
    item.save()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/evaluation/{run.pk}/rerun/")
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.DONE and run.stage == "done", run.error
    # new pairs: the new entity in each question of the triple that was already ranked; a question of the triple
    # not ranked before (its other side, SPEC 5.2 ranks both) brings all its test answers and labelled entities
    keys = (item.head.key, item.relation.key, item.tail.key)
    ranked = {(0, r, t) for (h, r, t), y in before.items() if y == "Y"} | {(1, r, h) for (h, r, t), y in
                                                                            before.items() if y == "Y"}
    from pooling.selectors.kg import kg_relation_keys
    from pooling.selectors.pools import entity_keys

    ents, rels = entity_keys(data.kg), kg_relation_keys(data.kg)
    test = [(ents[h], rels[r], ents[t]) for h, r, t in kg_triples(data.kg)["test"].tolist()]
    after = {**before, keys: "Y"}
    expected = 0
    for side, anchor, answer in ((0, keys[2], keys[0]), (1, keys[0], keys[2])):
        if (side, keys[1], anchor) in ranked:
            expected += 1
            continue
        answers = lambda triples: {h if side == 0 else t for h, r, t in triples  # noqa: E731
                                   if r == keys[1] and (t if side == 0 else h) == anchor}
        expected += len(answers(test) | answers(after))
    assert all(s["computed"] == expected and s["cached"] > 0 for s in run.summary["rank_stats"].values())
