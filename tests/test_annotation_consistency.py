"""Consistency flags (issue 8): contradicting answers are flagged and routed to adjudication."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Item, Role
from annotation.selectors.quality import adjudication_case
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.campaigns import create_campaign
from annotation.services.consistency import check_campaign
from annotation.services.judging import submit_judgment
from annotation.services.submit_sql import submit_for_api
from tests._annotation_quality_support import judge_all
from tests._annotation_support import tiny_pool, users

TRAIN = [(f"c{i}", "capital", f"k{i}") for i in range(10)] + [
    ("lyon", "likes", "nice"), ("nice", "likes", "paris"), ("paris", "likes", "fr"),
]
TEST = [("fr", "capital", "paris")]
ENTRIES = [
    ("fr", "capital", "lyon"), ("fr", "capital", "nice"),  # second answers of (fr, capital, ?): paris is the test answer
    ("c0", "capital", "k0"),  # stated by the KG (train)
    ("lyon", "capital", "k1"), ("nice", "capital", "k1"),  # two answers of (?, capital, k1)
    ("paris", "likes", "lyon"),  # nothing wrong
]


@pytest.fixture
def pool(tmp_path):
    return tiny_pool(tmp_path, name="caps", train=TRAIN, test=TEST, entries=ENTRIES, valid=[("fr", "likes", "lyon")])


def answers(plan):
    return lambda item, user: plan[(item.head.key, item.relation.key, item.tail.key)]


def api_submit(item, user, answer, url, now):
    """An answer as the API's submit gives it (``submit_for_api``: on PostgreSQL the few-statement path, whose
    first statement reads the check's unchanging facts; elsewhere ``submit_judgment``)."""
    hand_out = Assignment.objects.get(item=item, user=user, kind=Assignment.Kind.JUDGE).pk
    if submit_for_api(item.campaign.name, hand_out, user, answer, url, now=now) is None:
        submit_judgment(item, user, answer, url, now=now)


SUBMITS = {"service": None, "api": api_submit}


def flags_of(campaign):
    return {(i.head.key, i.tail.key): (i.status, sorted(i.flags)) for i in Item.objects.filter(campaign=campaign).select_related("head", "tail")}


@pytest.mark.django_db
@pytest.mark.parametrize("path", list(SUBMITS))
def test_contradictions_are_flagged_and_go_to_adjudication(pool, path):
    campaign = create_campaign("c1", pool)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    (judge,) = users(campaign, Role.ADJUDICATOR, 1)
    plan = {("fr", "capital", "lyon"): "Y", ("fr", "capital", "nice"): "N", ("c0", "capital", "k0"): "N",
            ("lyon", "capital", "k1"): "Y", ("nice", "capital", "k1"): "Y", ("paris", "likes", "lyon"): "Y"}
    judge_all(campaign, [a, b], answers(plan), submit=SUBMITS[path])
    flags = flags_of(campaign)
    # a yes for (fr, capital, ?) although the test answer paris is yes (1-1: one answer): agreed but flagged
    assert flags[("fr", "lyon")] == ("conflict", ["single_answer:tail"])
    assert flags[("fr", "nice")] == ("agreed", [])
    # a no for a triple the KG states
    assert flags[("c0", "k0")] == ("conflict", ["kg_states:train"])
    # two yes for (?, capital, k1): both flagged, the one agreed first turned into a conflict
    assert flags[("lyon", "k1")] == ("conflict", ["single_answer:head"])
    assert flags[("nice", "k1")] == ("conflict", ["single_answer:head"])
    assert flags[("paris", "lyon")] == ("agreed", [])
    # the adjudicator gets them with both answers' evidence and the reason
    assignment = next_adjudication(campaign, judge)
    case = adjudication_case(assignment.item)
    assert len(case.evidence) == 2 and case.flags and all(text for _flag, text in case.flags)
    adjudicate(assignment.item, judge, "N", "paris is the capital")
    assert Item.objects.get(pk=assignment.item_id).status == "adjudicated"
    # re-checking the whole campaign finds the same, adds nothing
    report = check_campaign(campaign)
    assert report.new_flags == 0 and len(report.flagged) == 4
    out = io.StringIO()
    call_command("check_consistency", campaign.name, stdout=out)
    assert "4 item(s) flagged" in out.getvalue() and "0 new flag(s)" in out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("path", list(SUBMITS))
def test_same_triple_judged_differently_in_two_campaigns(pool, path):
    first = create_campaign("round1", pool)
    a, b = users(first, Role.ANNOTATOR, 2)
    plan = {key: "N" for key in ENTRIES}
    plan[("c0", "capital", "k0")] = "Y"
    judge_all(first, [a, b], answers(plan))
    second = create_campaign("round2", pool, reuse=False)
    c, d = users(second, Role.ANNOTATOR, 2)
    plan2 = dict(plan)
    plan2[("paris", "likes", "lyon")] = "Y"
    judge_all(second, [c, d], answers(plan2), submit=SUBMITS[path])
    flags = flags_of(second)
    assert not [f for f in flags[("c0", "k0")][1] if f.startswith("kg_states")]  # a "yes" to a stated triple agrees
    assert flags[("paris", "lyon")] == ("conflict", ["cross_campaign:round1"])
    assert flags[("fr", "nice")] == ("agreed", [])
    assert flags_of(first)[("paris", "lyon")] == ("agreed", [])  # the earlier campaign is left as it is
    # ... until the second campaign's label is final and the first is re-checked
    (judge,) = users(second, Role.ADJUDICATOR, 1)
    adjudicate(Item.objects.get(campaign=second, tail__key="lyon", head__key="paris"), judge, "Y", "the source says so")
    report = check_campaign(first)
    assert report.flagged[Item.objects.get(campaign=first, tail__key="lyon", head__key="paris").pk] == ["cross_campaign:round2"]
