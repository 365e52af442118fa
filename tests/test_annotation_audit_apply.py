"""Making the expert-audit labels final (issue 14): the expert majority decides, a tie keeps the current label,
an item without a final label is left alone; origin ``audit`` in every export; a command and a confirmed button
on the audit page."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import AuditItem, Item, Role
from annotation.services.audit import apply_expert_labels, draw_audit_sample, submit_audit
from annotation.services.exports import export_judgments
from annotation.services.filtering import revert_auto_labels
from tests._annotation_support import star_campaign, users
from tests._annotation_web_support import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def audited(tmp_path):
    """Six finished items, all in the audit sample, answered by three experts:

    overturn   final Y, experts N N Y  -> majority N: changes
    confirm    final N, experts N N    -> agrees
    tie        final Y, experts N Y    -> tie: stays Y
    rule       final N by the type rule, expert Y -> changes to Y
    silent     final Y, no expert answer
    reopened   final N when drawn, sent back to judging since; expert Y -> left alone
    """
    campaign = star_campaign(tmp_path, items=6, name="audited")
    items = dict(zip(["overturn", "confirm", "tie", "rule", "silent", "reopened"],
                     Item.objects.filter(campaign=campaign).order_by("pk")))
    for name, label in (("overturn", "Y"), ("tie", "Y"), ("silent", "Y"), ("confirm", "N"), ("reopened", "N")):
        Item.objects.filter(pk=items[name].pk).update(status="agreed", label=label, label_origin="unanimous")
    Item.objects.filter(pk=items["rule"].pk).update(status="auto_negative", label="N", label_origin="rule", rule="type")
    assert draw_audit_sample(campaign, 6, seed=3).drawn == 6
    Item.objects.filter(pk=items["reopened"].pk).update(status="pending", label="", label_origin="")
    experts = users(campaign, Role.EXPERT, 3)
    answers = {"overturn": "NNY", "confirm": "NN", "tie": "NY", "rule": "Y", "reopened": "Y"}
    for name, labels in answers.items():
        for expert, label in zip(experts, labels):
            submit_audit(items[name], expert, label)
    return campaign, {name: item.pk for name, item in items.items()}


def state(pk):
    item = Item.objects.get(pk=pk)
    return item.status, item.label, item.label_origin, item.rule


def test_majority_wins_ties_keep_the_current_label(audited):
    campaign, pk = audited
    preview = apply_expert_labels(campaign, dry_run=True)
    assert sorted(preview.changed) == sorted([(pk["overturn"], "Y", "N"), (pk["rule"], "N", "Y")])
    assert (preview.answered, preview.confirmed, preview.ties, preview.not_final) == (5, 1, 1, 1)
    assert state(pk["overturn"]) == ("agreed", "Y", "unanimous", "")  # the dry run wrote nothing
    report = apply_expert_labels(campaign)
    assert sorted(report.changed) == sorted(preview.changed)
    assert state(pk["overturn"]) == ("adjudicated", "N", "audit", "")
    assert state(pk["rule"]) == ("adjudicated", "Y", "audit", "")
    assert state(pk["confirm"]) == ("agreed", "N", "unanimous", "")
    assert state(pk["tie"]) == ("agreed", "Y", "unanimous", "")
    assert state(pk["reopened"]) == ("pending", "", "", "")
    assert apply_expert_labels(campaign).changed == []  # idempotent
    # an audit label is no automatic negative any more: reverting the filter leaves it alone
    assert revert_auto_labels(campaign).sent_back == 0
    assert state(pk["rule"]) == ("adjudicated", "Y", "audit", "")
    # the audit report still compares with the labels as drawn
    assert AuditItem.objects.get(item_id=pk["overturn"]).final_label == "Y"


def test_exports_show_the_audit_origin(audited):
    campaign, pk = audited
    apply_expert_labels(campaign)
    keys = {p: Item.objects.filter(pk=p).values_list("head__key", "relation__key", "tail__key").get() for p in pk.values()}
    out = io.StringIO()
    export_judgments(campaign, "labels-origin", out)
    lines = {tuple(line.split("\t")[:3]): tuple(line.split("\t")[3:]) for line in out.getvalue().splitlines()}
    assert lines[keys[pk["overturn"]]] == ("N", "audit") and lines[keys[pk["rule"]]] == ("Y", "audit")
    assert lines[keys[pk["tie"]]] == ("Y", "unanimous")
    out = io.StringIO()
    export_judgments(campaign, "jsonl", out)
    records = {(r["head"], r["relation"], r["tail"]): r for r in map(json.loads, out.getvalue().splitlines())}
    assert (records[keys[pk["overturn"]]]["label"], records[keys[pk["overturn"]]]["origin"]) == ("N", "audit")
    out = io.StringIO()
    export_judgments(campaign, "csv", out)
    rows = {(r["head"], r["relation"], r["tail"]): r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert {(rows[keys[pk[n]]]["label"], rows[keys[pk[n]]]["origin"], rows[keys[pk[n]]]["label_origin"])
            for n in ("overturn", "rule")} == {("N", "audit", "audit"), ("Y", "audit", "audit")}


def test_command(audited):
    campaign, pk = audited
    out = io.StringIO()
    call_command("apply_audit_labels", campaign.name, "--dry-run", stdout=out)
    assert ("audited: 5 audited items; would change 2 final label(s) to the expert majority, 1 confirmed, "
            "1 tie(s) kept, 1 without a final label left alone") in out.getvalue()
    assert f"item {pk['overturn']}: Y -> N" in out.getvalue()
    assert state(pk["overturn"])[1] == "Y"
    out = io.StringIO()
    call_command("apply_audit_labels", str(campaign.pk), stdout=out)
    assert "changed 2 final label(s)" in out.getvalue() and state(pk["overturn"])[1] == "N"


def test_page_button_needs_the_confirmation(audited):
    campaign, pk = audited
    client = Client(enforce_csrf_checks=True)
    client.force_login(member(campaign, "boss", "admin"))
    page = client.get(reverse("annotation:manage_audit", args=[campaign.name]))
    html = page.content.decode()
    assert page.context["pending_apply"]["change"] == 2 and 'id="apply-form"' in html
    assert "<strong>2</strong> labels would change, 1 confirmed, 1 tie kept, 1 without a final label" in " ".join(html.split())
    token = page.cookies["csrftoken"].value if "csrftoken" in page.cookies else client.cookies["csrftoken"].value
    url = reverse("annotation:manage_audit_apply", args=[campaign.name])
    assert client.post(url, {}).status_code == 403  # no CSRF token
    assert client.post(url, {"csrfmiddlewaretoken": token}).status_code == 302  # not confirmed: nothing
    assert state(pk["overturn"])[1] == "Y"
    assert client.post(url, {"csrfmiddlewaretoken": token, "confirm": "1"}).status_code == 302
    assert state(pk["overturn"]) == ("adjudicated", "N", "audit", "")
    after = client.get(reverse("annotation:manage_audit", args=[campaign.name]))
    assert after.context["pending_apply"]["change"] == 0 and after.context["applied"] == 2
    assert 'id="apply-form"' not in after.content.decode()
    annotator = Client()
    annotator.force_login(member(campaign, "someone", "annotator"))
    assert annotator.post(url, {"confirm": "1"}).status_code in (403, 404)
