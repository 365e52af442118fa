"""Conflicts go to a third person who judged neither side; the adjudication records label and reason."""
from __future__ import annotations

import pytest

from annotation.models import Assignment, Item, Role
from annotation.services.adjudication import adjudicate, flag_for_adjudication, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

URL = "https://www.wikidata.org/wiki/Q1"


@pytest.fixture
def conflict(tmp_path):
    campaign = star_campaign(tmp_path, items=2)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    for user, answer in ((a, "Y"), (b, "N")):
        assignment = next_item(campaign, user)
        submit_judgment(assignment.item, user, answer, URL)
    item = Item.objects.get(status=Item.Status.CONFLICT)
    return campaign, item, a, b


@pytest.mark.django_db
def test_judges_never_get_or_decide_their_own_conflict(conflict):
    campaign, item, a, b = conflict
    for user in (a, b):
        from annotation.services.campaigns import add_member

        add_member(campaign, user, Role.ADJUDICATOR)
        assert next_adjudication(campaign, user) is None
        with pytest.raises(NotAllowed, match="judged"):
            adjudicate(item, user, "Y", "I know better")


@pytest.mark.django_db
def test_third_person_adjudicates_with_a_reason(conflict):
    campaign, item, a, b = conflict
    c, d = users(campaign, Role.ADJUDICATOR, 2)
    with pytest.raises(NotAllowed):
        next_adjudication(campaign, a)  # not an adjudicator
    handed = next_adjudication(campaign, c)
    assert handed.item_id == item.pk and handed.kind == Assignment.Kind.ADJUDICATE
    assert next_adjudication(campaign, c).pk == handed.pk  # own open hand-out first
    assert next_adjudication(campaign, d) is None  # held by c
    with pytest.raises(AnnotationError, match="reason"):
        adjudicate(item, c, "Y", "  ")
    decision = adjudicate(item, c, "Y", "Wikipedia infobox lists it")
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin) == ("adjudicated", "Y", "adjudicated")
    assert decision.reason == "Wikipedia infobox lists it"
    assert adjudicate(item, c, "Y", "again").pk == decision.pk  # retry
    with pytest.raises(InvalidState):
        adjudicate(item, d, "N", "disagree")
    assert Assignment.objects.get(pk=handed.pk).state == Assignment.State.DONE


@pytest.mark.django_db
def test_only_conflicts_can_be_adjudicated_and_flags_route_items(conflict):
    campaign, item, a, b = conflict
    (c,) = users(campaign, Role.ADJUDICATOR, 1)
    pending = Item.objects.exclude(pk=item.pk).get()
    with pytest.raises(InvalidState):
        adjudicate(pending, c, "N", "no")
    adjudicate(item, c, "N", "no source says so")
    # an agreed item with a consistency flag goes to the adjudication queue
    for user in (a, b):
        assignment = next_item(campaign, user)
        submit_judgment(assignment.item, user, "Y", URL)
    agreed = Item.objects.get(status=Item.Status.AGREED)
    flag_for_adjudication(agreed, "two-yes-single-answer")
    assert next_adjudication(campaign, c).item_id == agreed.pk
    agreed.refresh_from_db()
    assert agreed.flags == ["two-yes-single-answer"]
