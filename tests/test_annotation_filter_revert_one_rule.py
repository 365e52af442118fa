"""Reverting one trivial-filter rule sends back only the items no other applied rule still covers; the others
keep the remaining rules (issue 14: reverting `type` used to send back thousands of cardinality items)."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Item
from annotation.services.campaigns import create_campaign
from annotation.services.filtering import apply_filter, revert_auto_labels
from tests._annotation_web_support import member
from tests._filter_support import BOTH, CARDINALITY_ONLY, KEPT, TYPE_ONLY, typed_pool

pytestmark = pytest.mark.django_db


def states(campaign) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    rows = Item.objects.filter(campaign=campaign).values_list(
        "head__key", "relation__key", "tail__key", "status", "label", "rule")
    return {(h, r, t): (status, label, rule) for h, r, t, status, label, rule in rows}


def test_both_rules_applied_together(tmp_path):
    campaign = create_campaign("caps", typed_pool(tmp_path))
    assert apply_filter(campaign).applied == 3
    assert states(campaign) == {
        CARDINALITY_ONLY: ("auto_negative", "N", "cardinality"),
        BOTH: ("auto_negative", "N", "type,cardinality"),
        TYPE_ONLY: ("auto_negative", "N", "type"),
        KEPT: ("pending", "", ""),
    }
    result = revert_auto_labels(campaign, rules=["type"])
    assert (result.sent_back, result.still_covered) == (1, 1)
    after = states(campaign)
    assert after[TYPE_ONLY] == ("pending", "", "")
    assert after[BOTH] == ("auto_negative", "N", "cardinality")  # cardinality still covers it
    assert after[CARDINALITY_ONLY] == ("auto_negative", "N", "cardinality")
    result = revert_auto_labels(campaign, rules=["cardinality"])
    assert (result.sent_back, result.still_covered) == (2, 0)
    assert {state[0] for state in states(campaign).values()} == {"pending"}


def test_a_rule_applied_later_is_added_to_the_item(tmp_path):
    campaign = create_campaign("caps", typed_pool(tmp_path))
    assert apply_filter(campaign, ["type"]).applied == 2
    report = apply_filter(campaign, ["cardinality"])
    assert (report.applied, report.extended) == (1, 1)
    assert states(campaign)[BOTH] == ("auto_negative", "N", "type,cardinality")
    assert apply_filter(campaign, ["cardinality"]).extended == 0  # idempotent
    revert_auto_labels(campaign, rules=["type"])
    assert states(campaign)[BOTH] == ("auto_negative", "N", "cardinality")


def test_command_and_page_revert_one_rule(tmp_path):
    pool = typed_pool(tmp_path)
    campaign = create_campaign("caps", pool)
    apply_filter(campaign)
    out = io.StringIO()
    call_command("filter_pool", str(pool.pk), "--revert", "--rules", "type", stdout=out)
    assert "caps: 1 automatic negatives sent back to human judging, 1 kept N by another applied rule" in out.getvalue()
    assert states(campaign)[BOTH] == ("auto_negative", "N", "cardinality")
    client = Client()
    client.force_login(member(campaign, "boss", "admin"))
    response = client.post(reverse("annotation:manage_filter_revert", args=[campaign.name]), {"rule": "cardinality"})
    assert response.status_code == 302
    assert {state[0] for state in states(campaign).values()} == {"pending"}
