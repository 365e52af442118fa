"""Label origin kept apart and evidence carried (issue 8): origin column, qrels per annotator, evidence side by
side for the adjudicator and in the JSONL / CSV exports."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Item, Role
from annotation.selectors.quality import adjudication_case
from annotation.services.adjudication import adjudicate
from annotation.services.exports import export_judgments
from tests._annotation_quality_support import gold_campaign, judge_all
from tests._annotation_support import users

WIKI = "https://en.wikipedia.org/wiki/E#Career"
IMDB = "https://www.imdb.com/name/nm1/"


@pytest.fixture
def judged(tmp_path):
    campaign = gold_campaign(tmp_path, items=6, name="orig")
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    Item.objects.filter(pk=items[0].pk).update(status="auto_negative", label="N", label_origin="rule", rule="cardinality")
    Item.objects.filter(pk=items[1].pk).update(status="imported", label="Y", label_origin="imported")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    (c,) = users(campaign, Role.ADJUDICATOR, 1)
    conflict = items[2].pk
    for user, url in ((a, WIKI), (b, IMDB)):
        judge_all(campaign, [user], lambda item, u: "N" if item.pk == conflict and u == b else "Y", url=url)
    case = adjudication_case(Item.objects.get(pk=conflict))
    adjudicate(Item.objects.get(pk=conflict), c, "Y", "both sources name it")
    return campaign, items, case, (a, b)


@pytest.mark.django_db
def test_adjudicator_sees_both_evidences_side_by_side(judged):
    _campaign, _items, case, (a, b) = judged
    assert [(e.annotator, e.answer, e.source_url, e.source_domain) for e in case.evidence] == [
        (a.username, "Y", "https://en.wikipedia.org/wiki/E", "wikipedia.org"),
        (b.username, "N", "https://www.imdb.com/name/nm1/", "imdb.com"),
    ]
    assert all(e.given_at and e.time_on_task_ms == 5000 for e in case.evidence) and case.question


@pytest.mark.django_db
def test_exports_carry_evidence_and_origin(judged):
    campaign, items, _case, (a, b) = judged
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out)
    records = {r["tail"] + r["head"]: r for r in map(json.loads, out.getvalue().splitlines())}
    conflict = next(r for r in records.values() if r["adjudication"])
    assert [(j["answer"], j["source_domain"]) for j in conflict["judgments"]] == [("Y", "wikipedia.org"), ("N", "imdb.com")]
    assert all(j["given_at"] for j in conflict["judgments"])
    out = io.StringIO()
    export_judgments(campaign, "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    row = next(r for r in rows if r["adjudication_reason"])
    assert (row["judgment_1_source_domain"], row["judgment_2_source_domain"], row["label_origin"]) == ("wikipedia.org", "imdb.com", "adjudicated")
    assert {r["label_origin"] for r in rows} == {"rule:cardinality", "imported", "adjudicated", "unanimous", "test"}
    out = io.StringIO()
    assert export_judgments(campaign, "labels-origin", out) == 7
    origins = [line.split("\t")[4] for line in out.getvalue().splitlines()]
    assert sorted(origins) == sorted(["rule:cardinality", "imported", "adjudicated", "unanimous", "unanimous", "unanimous", "test"])


@pytest.mark.django_db
def test_qrels_per_annotator_and_adjudicated(judged, tmp_path):
    campaign, items, _case, (a, b) = judged
    final = io.StringIO()
    export_judgments(campaign, "qrels", final)
    final_rows = {tuple(line.split(" ")[i] for i in (0, 2, 3)) for line in final.getvalue().splitlines()}
    mine = {}
    for user in (a, b):
        out = io.StringIO()
        export_judgments(campaign, "qrels-annotator", out, annotator=user)
        mine[user.pk] = {tuple(line.split(" ")[i] for i in (0, 2, 3)) for line in out.getvalue().splitlines()}
    conflict = Item.objects.get(pk=items[2].pk)
    # the conflict's tail question: final and a say relevant, b says not
    tail_qid = next(q for q, e, rel in final_rows if e == conflict.tail.key and rel == "1" and q.startswith("tail"))
    assert (tail_qid, conflict.tail.key, "1") in mine[a.pk]
    assert (tail_qid, conflict.tail.key, "0") in mine[b.pk]
    # only their own answers: the 4 triples each judged, each answering its tail and its head question
    assert len(mine[a.pk]) == len(mine[b.pk]) == 8
    assert len(final_rows) > 8  # the final qrels also hold the rule, imported and sampled test labels
    path = tmp_path / "a.qrels"
    call_command("export_judgments", campaign.name, "--format", "qrels-annotator", "--annotator", a.username,
                 "-o", str(path), stderr=io.StringIO())
    assert {tuple(line.split(" ")[i] for i in (0, 2, 3)) for line in path.read_text().splitlines()} == mine[a.pk]
    with pytest.raises(ValueError):
        export_judgments(campaign, "qrels-annotator", io.StringIO())
