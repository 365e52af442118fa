"""Export formats with provenance, gold checks never exported, the export/import commands, agreement report."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Role
from annotation.selectors.agreement import agreement, rushed_judgments
from annotation.services.adjudication import adjudicate
from annotation.services.distribution import next_item
from annotation.services.exports import export_judgments
from annotation.services.judging import submit_judgment
from tests._annotation_support import Clock, star_campaign, users

URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """4 items: agreed Y, agreed N, conflict adjudicated Y, gold (agreed); every answer takes 1 s (annotator a)
    or 2 s (annotator b) on the server's clock, so none is rushed whatever the machine's load."""
    campaign = star_campaign(tmp_path, items=4, name="exp")
    clock = Clock().install(monkeypatch)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    (c,) = users(campaign, Role.ADJUDICATOR, 1)
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    gold = items[3]
    Item.objects.filter(pk=gold.pk).update(is_gold=True, gold_answer="N")
    plan = {items[0].pk: ("Y", "Y"), items[1].pk: ("N", "N"), items[2].pk: ("Y", "N"), gold.pk: ("N", "N")}
    for index, user in enumerate((a, b)):
        while (assignment := next_item(campaign, user)) is not None:
            clock.advance(index + 1)
            submit_judgment(assignment.item, user, plan[assignment.item_id][index], URL, quote="says so", client_time_ms=1000 * (index + 1))
    adjudicate(Item.objects.get(pk=items[2].pk), c, "Y", "the source is explicit")
    # gold is never decided by judging: give it a final label anyway (as an item made gold after it was agreed
    # would have), so the exports must leave it out because it is gold, not because it has no label
    Item.objects.filter(pk=gold.pk).update(status=Item.Status.AGREED, label="N")
    return campaign, items


@pytest.mark.django_db
def test_labels_positives_and_gold_never_exported(judged):
    campaign, items = judged
    out = io.StringIO()
    assert export_judgments(campaign, "labels", out) == 4  # 3 judged + the sampled test triple
    lines = set(out.getvalue().splitlines())
    assert "e0\tlikes\te1\tY" in lines  # the sampled test triple (sparse label)
    gold = items[3]
    assert f"{gold.head.key}\tlikes\t{gold.tail.key}\tN" not in lines
    positives = io.StringIO()
    assert export_judgments(campaign, "positives", positives) == 3


@pytest.mark.django_db
def test_jsonl_and_csv_carry_provenance(judged):
    campaign, items = judged
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 4
    by_tail = {r["tail"]: r for r in records}
    conflict = by_tail[items[2].tail.key]
    assert conflict["label"] == "Y" and conflict["origin"] == "adjudicated" and conflict["depth"] == 1
    assert [j["answer"] for j in conflict["judgments"]] == ["Y", "N"]
    assert conflict["judgments"][0]["source_url"] == URL and conflict["judgments"][0]["quote"] == "says so"
    assert conflict["adjudication"]["reason"] == "the source is explicit"
    assert conflict["questions"]  # the sample questions it answers
    assert by_tail["e1"]["origin"] == "test"
    out = io.StringIO()
    export_judgments(campaign, "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 4 and {r["adjudication_reason"] for r in rows} == {"", "the source is explicit"}


@pytest.mark.django_db
def test_qrels_and_questions(judged):
    campaign, _items = judged
    questions, qrels = io.StringIO(), io.StringIO()
    export_judgments(campaign, "questions", questions)
    export_judgments(campaign, "qrels", qrels)
    qids = {line.split("\t")[0] for line in questions.getvalue().splitlines()}
    rows = [line.split(" ") for line in qrels.getvalue().splitlines()]
    assert {row[0] for row in rows} == qids
    # tail question (e0, likes, ?) of the sample: answers e1 (test, Y) and the judged pool tails
    tail0 = [row for row in rows if row[0] == "tail0"]
    assert {(row[2], row[3]) for row in tail0} >= {("e1", "1")}


@pytest.mark.django_db
def test_export_and_import_commands(judged, tmp_path):
    campaign, _items = judged
    path = tmp_path / "labels.tsv"
    call_command("export_judgments", campaign.name, "--format", "labels", "-o", str(path), stderr=io.StringIO())
    assert len(path.read_text().splitlines()) == 4
    out = io.StringIO()
    call_command("import_judgments", campaign.name, str(path), stdout=out)
    assert "3 kept (judged here)" in out.getvalue() and "1 sampled test triples" in out.getvalue()


@pytest.mark.django_db
def test_export_options_found_from_outside(judged, tmp_path, monkeypatch):
    """-o - is standard output (it wrote a file named '-'); --annotator with a format it does not shape is refused
    (it was ignored)."""
    campaign, _items = judged
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    call_command("export_judgments", campaign.name, "--format", "labels", "-o", "-", stdout=out, stderr=io.StringIO())
    assert len(out.getvalue().splitlines()) == 4 and not (tmp_path / "-").exists()
    with pytest.raises(CommandError, match="--annotator goes with --format qrels-annotator"):
        call_command("export_judgments", campaign.name, "--format", "labels", "--annotator", "x", stdout=io.StringIO())


@pytest.mark.django_db
def test_agreement_report(judged):
    campaign, _items = judged
    (overall,) = agreement(campaign)
    assert overall.items == 3 and overall.percent == pytest.approx(2 / 3)  # gold left out
    assert len(agreement(campaign, "pair")) == 1 and agreement(campaign, "category")[0].group == "N-N"
    assert rushed_judgments(campaign) == []


@pytest.mark.django_db
def test_import_refuses_a_triple_labelled_both_ways_and_writes_nothing(tmp_path):
    """The last line won silently: "Y" then "N" for one pool triple was "2 lines: 2 items labelled" (found from
    outside); ``evaluate --labels`` already refused such a file."""
    from annotation.services.errors import AnnotationError
    from annotation.services.imports import import_judgments

    campaign = star_campaign(tmp_path, items=2, name="both-ways")
    first, second = Item.objects.filter(campaign=campaign).select_related("head", "relation", "tail").order_by("pk")
    line = f"{first.head.key}\t{first.relation.key}\t{first.tail.key}"
    other = f"{second.head.key}\t{second.relation.key}\t{second.tail.key}"
    path = tmp_path / "labels.tsv"
    path.write_text(f"{line}\tY\n{other}\tN\n{line}\tN\n")
    with pytest.raises(AnnotationError, match=rf"labels.tsv:3: {first.head.key} likes {first.tail.key} is labelled "
                                              r"both ways \(first on line 1\)$"):
        import_judgments(campaign, path)
    assert not Item.objects.filter(campaign=campaign, status=Item.Status.IMPORTED).exists()
    path.write_text(f"{line}\tY\n{line}\tY\n")  # the same label twice: one item labelled
    report = import_judgments(campaign, path)
    assert (report.lines, report.labelled) == (2, 1)
    assert Item.objects.get(pk=first.pk).label == "Y"
    for empty in ("", "\n# only a comment\n\n"):  # "0 lines", exit status 0 before
        path.write_text(empty)
        with pytest.raises(AnnotationError, match=r"labels.tsv: no labels in it \(expected"):
            import_judgments(campaign, path)
