"""Every item count of the campaign pages comes from one grouped query over the ``item_counts`` index (issue 18:
at 76,583 items each separate count read every item row), and each figure equals a count of the rows in Python."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Item, Label, Role
from annotation.selectors.campaigns import campaign_progress
from annotation.selectors.gold import gold_summary
from annotation.selectors.item_counts import item_counts
from annotation.selectors.web import progress, status_counts
from annotation.services.gold import gold_target, human_item_count
from annotation.services.reuse import reused_count
from tests._annotation_support import star_campaign
from tests._annotation_web_support import member

pytestmark = pytest.mark.django_db

FINAL = {"auto_negative", "agreed", "adjudicated", "imported"}
TO_JUDGE = {"pending", "in_progress", "agreed", "conflict", "adjudicated"}  # what the gold rate applies to
# (status, label origin, label, flags) of the items after the first, in order; the rest stay pending
STATES = [
    ("auto_negative", "rule", "N", []), ("auto_negative", "rule", "N", []), ("imported", "imported", "Y", []),
    ("imported", "reused", "N", []), ("agreed", "reused", "Y", []), ("agreed", "unanimous", "Y", ["kg_states"]),
    ("conflict", "", "", ["single_answer:3", "kg_states"]), ("adjudicated", "adjudicated", "N", []),
    ("in_progress", "", "", []), ("in_progress", "", "", ["cross_campaign"]),
]


def varied_campaign(tmp_path):
    campaign = star_campaign(tmp_path, items=16, name="counts")
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    for item, (status, origin, label, flags) in zip(items[1:], STATES):
        Item.objects.filter(pk=item.pk).update(status=status, label_origin=origin, label=label, flags=flags)
    # two gold checks (Y and N), one of them flagged and final: neither counts among the campaign's items
    for item, answer in zip(items[-2:], (Label.YES, Label.NO)):
        Item.objects.filter(pk=item.pk).update(is_gold=True, gold_answer=answer, entry=None, status="agreed",
                                               flags=["kg_states"])
    return campaign


def brute_force(campaign) -> dict:
    rows = list(Item.objects.filter(campaign=campaign).values_list("is_gold", "status", "label_origin", "gold_answer",
                                                                   "flags"))
    people = [r for r in rows if not r[0]]
    return {
        "by_status": {s: sum(r[1] == s for r in people) for s in Item.Status.values},
        "automatic": sum(r[1] in FINAL and r[2] in ("rule", "imported", "reused") for r in people),
        "reused": sum(r[2] == "reused" for r in people), "flagged": sum(bool(r[4]) for r in people),
        "gold": sum(r[0] for r in rows), "gold_yes": sum(r[0] and r[3] == "Y" for r in rows),
        "gold_no": sum(r[0] and r[3] == "N" for r in rows), "to_judge": sum(r[1] in TO_JUDGE for r in people),
        "decided": sum(r[1] in FINAL for r in people), "total": len(people),
    }


def test_the_counts_equal_a_count_of_the_rows(tmp_path):
    campaign = varied_campaign(tmp_path)
    expected = brute_force(campaign)
    assert expected["by_status"]["pending"] == 4 and expected["gold"] == 2  # the setup is what it says
    with CaptureQueriesContext(connection) as captured:
        counts = item_counts(campaign)
    assert len(captured.captured_queries) == 1
    assert counts.by_status == expected["by_status"]
    assert (counts.automatic, counts.reused, counts.flagged) == (5, 2, 3) == tuple(
        expected[k] for k in ("automatic", "reused", "flagged"))
    assert (counts.gold, counts.gold_yes, counts.gold_no) == (2, 1, 1)
    assert (counts.decided, counts.total) == (expected["decided"], expected["total"])
    # the readers built on it give what their own queries gave
    assert campaign_progress(campaign) == {**expected["by_status"], "total": 14, "gold": 2}
    assert dict((s, n) for s, _label, n in status_counts(campaign)) == expected["by_status"]
    assert reused_count(campaign) == 2
    assert gold_target(campaign, counts) == gold_target(campaign)
    assert gold_target(campaign)[0] == human_item_count(campaign) == expected["to_judge"] == 10
    summary = gold_summary(campaign)
    assert (summary.items, summary.yes, summary.no) == (2, 1, 1)


def test_the_grouped_query_reads_the_index_only(tmp_path):
    """Every item column the query names is in the covering index item_counts, so it can read the index only;
    SQLite's plan says it does. (PostgreSQL's choice depends on its visibility map, which VACUUM sets: after the
    writes of a test session it may cost the index-only scan as an index scan and take the campaign index.)"""
    campaign = varied_campaign(tmp_path)
    with CaptureQueriesContext(connection) as captured:
        item_counts(campaign)
    (query,) = captured.captured_queries
    table = Item._meta.db_table
    named = set(re.findall(rf'"{table}"\."(\w+)"', query["sql"]))
    (index,) = [i for i in Item._meta.indexes if i.name == "item_counts"]
    covered = {Item._meta.get_field(name).column for name in index.fields}
    assert named and named <= covered, named - covered
    assert {"campaign_id", "status", "is_gold"} <= named  # the filter and the grouping are among them
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "COVERING INDEX item_counts" in plan, plan


def test_pages_show_the_counted_figures(tmp_path, client):
    campaign = varied_campaign(tmp_path)
    expected = brute_force(campaign)
    boss = member(campaign, "boss", Role.ADMIN)
    client.force_login(boss)
    dashboard = client.get(f"/campaigns/{campaign.name}/manage/")
    assert dashboard.status_code == 200
    assert {s: n for s, _label, n, _pct in dashboard.context["counts"]} == expected["by_status"]
    assert (dashboard.context["reused"], dashboard.context["flagged"]) == (2, 3)
    assert (dashboard.context["gold"].items, dashboard.context["gold"].yes, dashboard.context["gold"].no) == (2, 1, 1)
    shown = dashboard.context["progress"]
    assert (shown.campaign_total, shown.campaign_decided, shown.campaign_automatic) == (
        expected["total"], expected["decided"], expected["automatic"])
    assert shown.campaign_percent == round(100 * expected["decided"] / expected["total"], 1)
    now = timezone.now()
    assert progress(campaign, boss, now=now) == progress(campaign, boss, now=now, counts=item_counts(campaign))
    home = client.get(f"/campaigns/{campaign.name}/")
    assert home.context["progress"].campaign_automatic == expected["automatic"]
    assert home.context["progress"].campaign_people_percent == round(
        100 * (expected["decided"] - expected["automatic"]) / (expected["total"] - expected["automatic"]), 1)
    quality = client.get(f"/campaigns/{campaign.name}/manage/quality/")
    assert (quality.context["human_items"], quality.context["reused"]) == (expected["to_judge"], 2)
    assert quality.context["gold"].items == 2
