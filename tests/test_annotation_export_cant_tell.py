"""Exports carry "can't tell" answers (issue 15): the answer C with the annotator's comment in the quote column
(csv, jsonl); the item has no label until adjudicated, so the label sets leave it out; the datasheet says how
agreement counted it."""
from __future__ import annotations

import csv
import io
import json

import pytest

from annotation.models import Role
from annotation.services.adjudication import adjudicate
from annotation.services.datasheet import datasheet
from annotation.services.distribution import next_item
from annotation.services.exports import export_judgments
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://www.wikidata.org/wiki/Q1"


@pytest.fixture
def cant_tell(tmp_path):
    campaign = star_campaign(tmp_path, items=1, name="ct-export")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    c, = users(campaign, Role.ADJUDICATOR, 1)
    handed = next_item(campaign, a)
    submit_judgment(handed.item, a, "C", "", quote="two films of that name")
    submit_judgment(next_item(campaign, b).item, b, "Y", URL)
    return campaign, handed.item, a, b, c


def _export(campaign, fmt):
    out = io.StringIO()
    export_judgments(campaign, fmt, out)
    return out.getvalue()


def test_csv_and_jsonl_carry_the_answer_and_comment(cant_tell):
    campaign, item, a, b, c = cant_tell
    row = next(r for r in csv.DictReader(io.StringIO(_export(campaign, "csv"))) if r["status"] == "conflict")
    assert (row["judgment_1_annotator"], row["judgment_1_answer"], row["judgment_1_quote"], row["judgment_1_source_url"]) \
        == (f"annotator-{a.pk}", "C", "two films of that name", "")
    assert (row["judgment_2_answer"], row["label"]) == ("Y", "")
    record = next(json.loads(line) for line in _export(campaign, "jsonl").splitlines()
                  if json.loads(line)["status"] == "conflict")
    assert [(j["answer"], j["quote"]) for j in record["judgments"]] == [("C", "two films of that name"), ("Y", "")]
    head, tail = item.head.key, item.tail.key
    assert f"{head}\tlikes\t{tail}" not in _export(campaign, "labels")  # undecided: not in the label set
    adjudicate(item, c, "N", "the comment is right")
    assert f"{head}\tlikes\t{tail}\tN\n" in _export(campaign, "labels")


def test_the_datasheet_reports_them_beside_the_agreement(cant_tell):
    campaign = cant_tell[0]
    text = datasheet(campaign)
    assert "agreement over 1 doubly judged items: 0.0%" in text
    assert "1 of them with a can't-tell answer" in text


def test_an_annotator_s_qrels_leave_can_t_tell_out(cant_tell):
    from annotation.selectors.quality import annotator_qrels

    campaign, item, a, b, c = cant_tell
    assert annotator_qrels(campaign, a) == []  # no relevance judgment given (was "not relevant", 0)
    # b's Y answers both sides' questions: the head question names the head, the tail question the tail
    assert sorted((entity, rel) for _qid, entity, rel in annotator_qrels(campaign, b)) == \
        sorted([(item.tail.key, 1), (item.head.key, 1)])



def test_annotators_qrels_give_one_question_one_qid_across_annotators(tmp_path):
    """Questions that only an annotator answered Y (no final positive) were numbered per annotator: two annotators'
    files gave the same qid to two different questions (found from outside: head162 named one question in
    annotator1's file and another in annotator2's)."""
    from annotation.selectors.quality import annotator_qrels

    campaign = star_campaign(tmp_path, items=3, name="qid-clash")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    # by the triple's tail: e3 a Y / b N, e4 a N / b Y, e5 both Y (a final positive)
    answers = {(a, "e3"): "Y", (b, "e3"): "N", (a, "e4"): "N", (b, "e4"): "Y", (a, "e5"): "Y", (b, "e5"): "Y"}
    for user in (a, b):
        while (assignment := next_item(campaign, user)) is not None:
            submit_judgment(assignment.item, user, answers[(user, assignment.item.tail.key)], URL)
    # each triple (e0, likes, eK) answers the head question (?, likes, eK): its rows name the head e0
    head_qids = {user: {qid for qid, entity, rel in annotator_qrels(campaign, user) if entity == "e0" and rel == 1}
                 for user in (a, b)}
    assert len(head_qids[a]) == len(head_qids[b]) == 2  # a: e3's and e5's questions; b: e4's and e5's
    assert len(head_qids[a] & head_qids[b]) == 1  # e5's question, the only one both files share
    assert len(head_qids[a] | head_qids[b]) == 3  # three different questions, three qids
