"""An undone answer stays in the history (issue 15): an ``undo`` label version with the withdrawn answer and
evidence as old values, the judgment kept (withdrawn) for the admin, the exports with history and backups; the
exports' current judgments and the agreement no longer count it."""
from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Judgment, LabelVersion, Role
from annotation.selectors.agreement import agreement
from annotation.services.distribution import next_item
from annotation.services.exports import export_judgments
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def undone(tmp_path):
    campaign = star_campaign(tmp_path, items=1, name="undo-hist")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    first = submit_judgment(next_item(campaign, a).item, a, "Y", URL, quote="it says so")
    mistaken = submit_judgment(next_item(campaign, b).item, b, "N", URL + "_(film)", quote="wrong page")
    undo_judgment(mistaken, b)
    corrected = submit_judgment(next_item(campaign, b).item, b, "Y", URL)
    return campaign, a, b, first, mistaken, corrected


def test_the_undo_is_a_new_version_and_the_judgment_is_kept(undone):
    campaign, a, b, first, mistaken, corrected = undone
    versions = list(LabelVersion.objects.filter(item=first.item).order_by("changed_at", "pk"))
    assert [(v.judgment_id, v.reason, v.old_answer, v.new_answer) for v in versions] == [
        (first.pk, "submit", "", "Y"), (mistaken.pk, "submit", "", "N"), (mistaken.pk, "undo", "N", ""),
        (corrected.pk, "submit", "", "Y")]
    undo = versions[2]
    assert (undo.author_id, undo.changed_by_id, undo.old_source_url, undo.old_text, undo.new_source_url) == \
        (b.pk, b.pk, URL + "_(film)", "wrong page", "")
    kept = Judgment.all_objects.get(pk=mistaken.pk)
    assert (kept.answer, kept.quote) == ("N", "wrong page") and kept.withdrawn_at == undo.changed_at
    assert list(Judgment.objects.filter(item=first.item).values_list("pk", flat=True)) == [first.pk, corrected.pk]
    first.item.refresh_from_db()
    assert (first.item.status, first.item.label) == ("agreed", "Y")
    assert agreement(campaign)[0].percent == 1.0  # the withdrawn N is no pair


def test_exports_with_history_keep_the_undone_answer(undone):
    campaign, a, b, first, mistaken, corrected = undone
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out, with_history=True)
    record = next(json.loads(line) for line in out.getvalue().splitlines() if json.loads(line)["status"] == "agreed")
    assert [j["answer"] for j in record["judgments"]] == ["Y", "Y"]  # the current judgments
    undo_rows = [h for h in record["history"] if h["reason"] == "undo"]
    assert undo_rows == [{**undo_rows[0], "old_answer": "N", "new_answer": "", "author": f"annotator-{b.pk}",
                          "old_text": "wrong page", "note": "undone by its author"}]


def test_the_admin_lists_the_withdrawn_judgment(undone, client):
    campaign, a, b, first, mistaken, corrected = undone
    admin = get_user_model().objects.create_superuser("undo-admin", password="pw")
    client.force_login(admin)
    page = client.get(f"/admin/annotation/judgment/{mistaken.pk}/change/")
    assert page.status_code == 200 and "undone by its author" in page.content.decode()
    listing = client.get("/admin/annotation/judgment/?withdrawn_at__isempty=0").content.decode()
    assert f"/admin/annotation/judgment/{mistaken.pk}/change/" in listing
    assert f"/admin/annotation/judgment/{corrected.pk}/change/" not in listing


def test_a_backup_carries_the_withdrawn_judgment(undone, tmp_path):
    from annotation.services.backup import backup_campaign
    from tests._history_support import archive_members

    campaign, a, b, first, mistaken, corrected = undone
    path = tmp_path / "undo.tar.gz"
    backup_campaign(campaign, path)
    members = archive_members(path)
    rows = [json.loads(line) for line in members["judgments.jsonl"].decode().splitlines()]
    assert sorted((r["answer"], r["withdrawn_at"] is not None) for r in rows) == [("N", True), ("Y", False), ("Y", False)]
    versions = [json.loads(line) for line in members["label_versions.jsonl"].decode().splitlines()]
    assert [v["reason"] for v in versions].count("undo") == 1
