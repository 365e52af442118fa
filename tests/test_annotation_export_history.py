"""Exports with the label history (issue 13): jsonl / csv records carry every version of the item's judgments
(who, when, old -> new, why) with --with-history; without it the records are as before (no history key)."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Item, Judgment, Role
from annotation.services.distribution import next_item
from annotation.services.exports import export_judgments
from annotation.services.judging import submit_judgment
from annotation.services.label_edits import edit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def edited(tmp_path):
    campaign = star_campaign(tmp_path, items=2, name="hist-export")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for user in (a, b):
        handed = next_item(campaign, user)
        submit_judgment(handed.item, user, "Y", URL)
    admin = get_user_model().objects.create_user("hist-admin")
    judgment = Judgment.objects.get(item=handed.item, user=b)
    edit_judgment(judgment, by=admin, note="checked the source again", answer="N", source_url=URL + "_(film)")
    item = Item.objects.select_related("head", "relation", "tail").get(pk=handed.item_id)
    return campaign, item, a, b, admin


def test_jsonl_and_csv_carry_the_history(edited):
    campaign, item, a, b, admin = edited
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out, with_history=True)
    records = {(r["head"], r["relation"], r["tail"]): r for r in map(json.loads, out.getvalue().splitlines())}
    record = records[(item.head.key, item.relation.key, item.tail.key)]
    assert record["status"] == "conflict"
    history = [(v["reason"], v["author"], v["changed_by"], v["old_answer"], v["new_answer"], v["new_source_url"], v["note"])
               for v in record["history"]]
    assert history == [
        ("submit", f"annotator-{a.pk}", f"annotator-{a.pk}", "", "Y", URL, ""),
        ("submit", f"annotator-{b.pk}", f"annotator-{b.pk}", "", "Y", URL, ""),
        ("admin_edit", f"annotator-{b.pk}", f"annotator-{admin.pk}", "Y", "N", URL + "_(film)", "checked the source again"),
    ]
    assert all(r["history"] == [] for key, r in records.items() if key != (item.head.key, item.relation.key, item.tail.key))

    out = io.StringIO()
    export_judgments(campaign, "csv", out, with_history=True)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    row = next(r for r in rows if (r["head"], r["tail"]) == (item.head.key, item.tail.key))
    assert [v["new_answer"] for v in json.loads(row["history"])] == ["Y", "Y", "N"]


def test_without_the_option_the_exports_are_unchanged(edited):
    campaign, *_ = edited
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out)
    assert all("history" not in json.loads(line) for line in out.getvalue().splitlines())
    out = io.StringIO()
    export_judgments(campaign, "csv", out)
    assert "history" not in out.getvalue().splitlines()[0].split(",")
    with pytest.raises(CommandError, match="--with-history goes with --format jsonl or csv"):
        call_command("export_judgments", campaign.name, "--format", "labels", "--with-history")
