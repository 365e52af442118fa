"""next_item / skip / expiry: who gets which item (single-threaded rules)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Role
from annotation.services.distribution import next_item, release_expired, skip_item
from annotation.services.errors import NotAllowed
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

URL = "https://en.wikipedia.org/wiki/X"


@pytest.fixture
def campaign(tmp_path):
    return star_campaign(tmp_path, items=4, assignment_timeout_s=60)


@pytest.mark.django_db
def test_only_annotators_get_work(campaign):
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    with pytest.raises(NotAllowed):
        next_item(campaign, adjudicator)


@pytest.mark.django_db
def test_own_open_assignment_comes_back_first(campaign):
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    first = next_item(campaign, a)
    again = next_item(campaign, a)
    assert again.pk == first.pk
    assert Item.objects.get(pk=first.item_id).num_active == 1


@pytest.mark.django_db
def test_at_most_two_people_per_item_and_never_twice_the_same(campaign):
    annotators = users(campaign, Role.ANNOTATOR, 5)
    handed: dict[int, list[int]] = {}
    for user in annotators:
        while (assignment := next_item(campaign, user)) is not None:
            handed.setdefault(assignment.item_id, []).append(user.pk)
            submit_judgment(assignment.item, user, "Y", URL)
    assert sorted(handed) == sorted(Item.objects.filter(campaign=campaign).values_list("pk", flat=True))
    assert all(len(who) == 2 and len(set(who)) == 2 for who in handed.values())
    assert set(Item.objects.filter(campaign=campaign).values_list("status", "label", "label_origin")) == {
        ("agreed", "Y", "unanimous")
    }
    # The first two annotators took everything; the others got nothing.
    assert next_item(campaign, annotators[4]) is None


@pytest.mark.django_db
def test_partly_judged_items_are_finished_first(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    first = next_item(campaign, a)
    submit_judgment(first.item, a, "N", URL)
    assert next_item(campaign, b).item_id == first.item_id


@pytest.mark.django_db
def test_skip_returns_the_item_to_others_but_never_to_the_skipper(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    skipped = next_item(campaign, a)
    skip_item(skipped.item, a)
    assert Item.objects.get(pk=skipped.item_id).status == Item.Status.PENDING
    seen = set()
    while (assignment := next_item(campaign, a)) is not None:
        seen.add(assignment.item_id)
        skip_item(assignment.item, a)
    assert skipped.item_id not in seen and len(seen) == 3
    others = set()
    while (assignment := next_item(campaign, b)) is not None:
        others.add(assignment.item_id)
        skip_item(assignment.item, b)
    assert skipped.item_id in others


@pytest.mark.django_db
def test_expired_assignments_go_back_to_the_queue(campaign):
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    now = timezone.now()
    held = [next_item(campaign, user, now=now) for user in (a, b)]
    assert held[0].item_id == held[1].item_id  # partly handed-out items first
    # c cannot get that item while a and b hold it
    other = next_item(campaign, c, now=now)
    assert other.item_id != held[0].item_id
    later = now + timedelta(seconds=61)
    assert release_expired(campaign, now=later) == 3
    assert set(Assignment.objects.values_list("state", flat=True)) == {"expired"}
    assert set(Item.objects.values_list("num_active", "status")) == {(0, "pending")}
    # The expired items can go to someone new; they are never handed to the same person twice.
    (d,) = users(campaign, Role.ANNOTATOR, 1, prefix="late")
    assert next_item(campaign, d, now=later) is not None
    assert next_item(campaign, a, now=later).item_id != held[0].item_id
