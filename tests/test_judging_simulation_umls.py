"""Simulation before spending, leave-one-system-out and the exported datasheet end to end on the bundled UMLS
(issue 20): three tiny trained systems, a depth-5 pool, a seeded labels file as the oracle.

Independent checks: the positives the replay finds in the end are the oracle's Y entries that the trivial filters
leave to people (counted here from the file and the filters' preview); with every label known the ranking equals
the full-pool ranking (tau-b 1 for every metric); the entries a system leaves unjudged when it is left out are the
entries only it retrieved (counted from the pool's hits).
"""
from __future__ import annotations

import csv
import json
import random
from collections import Counter, defaultdict
from io import StringIO

import pytest
from django.core.management import call_command

from tests._pool_support import import_umls, storage, train_tiny  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def umls_pool(storage, tmp_path):  # noqa: F811
    from annotation.services.campaigns import create_campaign
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import create_sample

    kg = import_umls()
    systems = [train_tiny(kg, "distmult", "distmult-a", seed=0), train_tiny(kg, "distmult", "distmult-b", seed=1),
               train_tiny(kg, "transe", "transe-a", seed=0)]
    sample = create_sample(kg, name="first25", method="file", seed=None, indices=list(range(25)))
    pool = build_pool_now(create_pool(sample, systems, 5))
    campaign = create_campaign("umls-sim", pool, reuse=False)
    rng = random.Random(11)
    lines = [f"{h}\t{r}\t{t}\t{'Y' if rng.random() < 0.25 else 'N'}\n"
             for h, r, t in pool.entries.order_by("pk").values_list("head__key", "relation__key", "tail__key")]
    labels = tmp_path / "oracle.tsv"
    labels.write_text("".join(lines), encoding="utf-8")
    return sample, pool, campaign, labels


def test_simulate_judging_replays_the_oracle(umls_pool, tmp_path):
    from annotation.selectors.filtering import filter_preview

    sample, pool, _campaign, labels = umls_pool
    fired = set(filter_preview(pool).fired)
    key_of = {pk: (h, r, t) for pk, h, r, t in pool.entries.values_list("pk", "head__key", "relation__key", "tail__key")}
    oracle = {tuple(line.split("\t")[:3]): line.split("\t")[3].strip() for line in labels.read_text().splitlines()}
    people = [pk for pk in key_of if pk not in fired]
    expected_positives = sum(oracle[key_of[pk]] == "Y" for pk in people)
    out = tmp_path / "sim"
    stdout = StringIO()
    call_command("simulate_judging", f"umls/{sample.name}", "--labels", str(labels), "--seeds", "2", "--points", "8",
                 "--orders", "random,depth,move_to_front,maxmean,maxmean_question,kg_aware,cal", "--out", str(out),
                 stdout=stdout)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"] == len(people) and summary["positives"] == expected_positives
    assert [row["order"] for row in summary["summary"]] == ["random", "depth", "move_to_front", "maxmean",
                                                            "maxmean_question", "kg_aware", "cal"]
    with (out / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    last = [row for row in rows if int(row["judgments"]) == len(people)]
    assert len(last) == 14  # 7 orders x 2 seeds
    for row in last:
        assert int(row["positives_found"]) == expected_positives
        assert float(row["tau_micro_MRR"]) == pytest.approx(1.0) and float(row["tau_macro_MRR"]) == pytest.approx(1.0)
    assert (out / "positives.png").stat().st_size > 0 and (out / "tau_macro_MRR.png").is_file()
    assert "90% positives" in stdout.getvalue()


def test_reusability_and_datasheet(umls_pool):
    from annotation.services.exports import export_judgments
    from annotation.services.imports import import_judgments
    from evaluation.services.labels import CampaignLabels
    from evaluation.services.reusability import pool_reusability, save
    from pooling.models import PoolHit

    sample, pool, campaign, labels = umls_pool
    import_judgments(campaign, labels)
    result = pool_reusability(sample, CampaignLabels(campaign), pool)
    systems_of = defaultdict(set)
    for entry, system in PoolHit.objects.filter(entry__pool=pool).values_list("entry_id", "system__name"):
        systems_of[entry].add(system)
    only = {name: sum(1 for s in systems_of.values() if s == {name}) for name in result["systems"]}
    rows = [row for row in result["rows"] if row["group"] == row["system"]]
    assert {row["system"] for row in rows} == {"distmult-a", "distmult-b", "transe-a"}
    for row in rows:
        assert row["items_left_out"] == only[row["system"]]
    family = [row for row in result["rows"] if row["group"] == "family:distmult"]
    both = sum(1 for s in systems_of.values() if s <= {"distmult-a", "distmult-b"})
    assert family and all(row["items_left_out"] == both for row in family)
    save(result, campaign.name)
    out = StringIO()
    export_judgments(campaign, "readme", out)
    text = out.getvalue()
    assert "depth 5" in text and "distmult-a (distmult)" in text and "| family:distmult | micro_MRR |" in text
    labels_file = StringIO()
    export_judgments(campaign, "labels", labels_file)
    exported = Counter(line.split("\t")[3] for line in labels_file.getvalue().splitlines() if line)
    tests = sample.triples.count()
    assert exported["Y"] > tests > 0 and exported["N"] > 0
    # the README counts what labels.tsv holds, the test triples included (it counted the pool items only)
    assert f"- labels.tsv: {exported['Y']} Y, {exported['N']} N: the sample's {tests} test triples (Y, origin test)" in text


def test_the_last_simulation_shows_on_the_campaign_page(umls_pool, client, settings, tmp_path):
    from annotation.models import Role
    from tests._annotation_web_support import member

    settings.VAR_DIR = tmp_path / "var"  # simulations go to VAR_DIR/simulations/sample-<pk>: none from an earlier run
    sample, _pool, campaign, labels = umls_pool
    client.force_login(member(campaign, "boss", Role.ADMIN))
    page = client.get(f"/campaigns/{campaign.name}/manage/order/simulation/")
    assert page.status_code == 200 and b"No simulation" in page.content
    call_command("simulate_judging", str(sample.pk), "--labels", str(labels), "--seeds", "1", "--points", "4",
                 "--orders", "random,kg_aware", stdout=StringIO())
    page = client.get(f"/campaigns/{campaign.name}/manage/order/simulation/")
    assert page.status_code == 200 and b"kg_aware" in page.content and b"positives.png" in page.content
    csv_file = client.get(f"/campaigns/{campaign.name}/manage/order/simulation/?file=curves.csv")
    assert csv_file.status_code == 200 and b"positives_found" in b"".join(csv_file.streaming_content)
    assert client.get(f"/campaigns/{campaign.name}/manage/order/simulation/?file=../../etc").status_code == 404
