"""The adjudication queue's rules, case by case (issue 19: each rule's mutants): who may decide, which hand-out
counts (open and unexpired, to the second), the order of the queue, the whole refusal messages."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Adjudication, Assignment, Item, Role
from annotation.services.adjudication import adjudicate, flag_for_adjudication, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed, NotAssigned
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users
from tests._raises_support import whole

URL = "https://www.wikidata.org/wiki/Q1"


def make_conflicts(campaign, a, b, count: int) -> list[Item]:
    """``count`` conflicts: a answers Y and b answers N to the same items."""
    for _ in range(count):
        for user, answer in ((a, "Y"), (b, "N")):
            assignment = next_item(campaign, user)
            submit_judgment(assignment.item, user, answer, URL)
    return list(Item.objects.filter(campaign=campaign, status=Item.Status.CONFLICT).order_by("pk"))


@pytest.fixture
def setting(tmp_path):
    campaign = star_campaign(tmp_path, items=3, assignment_timeout_s=600)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    c, d = users(campaign, Role.ADJUDICATOR, 2)
    return campaign, a, b, c, d


@pytest.mark.django_db
def test_refusals_say_who_and_why_in_whole(setting):
    campaign, a, b, c, d = setting
    (item,) = make_conflicts(campaign, a, b, 1)
    with pytest.raises(NotAllowed, match=whole(f"{a} is not an adjudicator of campaign {campaign.name}")):
        next_adjudication(campaign, a)
    with pytest.raises(NotAllowed, match=whole(f"{a} is not an adjudicator of campaign {campaign.name}")):
        adjudicate(item, a, "Y", "why")
    for blank in ("", "  \n", None):
        with pytest.raises(AnnotationError, match=whole("an adjudication needs a reason")):
            adjudicate(item, c, "Y", blank)
    with pytest.raises(AnnotationError, match=whole("the answer must be Y or N, not 'C'")):
        adjudicate(item, c, "C", "can't tell is no final label")
    from annotation.services.campaigns import add_member

    add_member(campaign, a, Role.ADJUDICATOR)
    with pytest.raises(NotAllowed, match=whole(f"{a} judged item {item.pk} and cannot adjudicate it")):
        adjudicate(item, a, "Y", "mine")
    pending = Item.objects.filter(campaign=campaign, status=Item.Status.PENDING).first()
    with pytest.raises(InvalidState, match=whole(f"item {pending.pk} is pending, not a conflict to adjudicate")):
        adjudicate(pending, c, "N", "no")
    assert not Adjudication.objects.exists()


@pytest.mark.django_db
def test_the_reason_is_stored_stripped_and_only_the_same_decision_is_a_retry(setting):
    campaign, a, b, c, d = setting
    (item,) = make_conflicts(campaign, a, b, 1)
    decision = adjudicate(item, c, "yes", "  infobox  ")
    assert (decision.label, decision.reason, decision.adjudicator_id) == ("Y", "infobox", c.pk)
    assert adjudicate(item, c, "Y", "again").pk == decision.pk
    adjudicated = "item {} is adjudicated, not a conflict to adjudicate".format(item.pk)
    with pytest.raises(InvalidState, match=whole(adjudicated)):
        adjudicate(item, c, "N", "changed my mind")  # same person, other label: not a retry
    with pytest.raises(InvalidState, match=whole(adjudicated)):
        adjudicate(item, d, "Y", "same label, other person")
    assert list(Adjudication.objects.values_list("label", "reason")) == [("Y", "infobox")]


@pytest.mark.django_db
def test_hand_outs_last_the_campaign_timeout_to_the_second(setting):
    campaign, a, b, c, d = setting
    (item,) = make_conflicts(campaign, a, b, 1)
    start = timezone.now()
    handed = next_adjudication(campaign, c, now=start)
    assert (handed.handed_out_at, handed.expires_at) == (start, start + timedelta(seconds=600))
    last_second = start + timedelta(seconds=599)
    assert next_adjudication(campaign, c, now=last_second).pk == handed.pk  # still c's
    assert next_adjudication(campaign, d, now=last_second) is None  # held by c
    expiry = start + timedelta(seconds=600)
    # at the expiry the hand-out has lapsed: c gets no new one for an item handed to them before, d gets it
    assert next_adjudication(campaign, c, now=expiry) is None
    closed = f"your adjudication hand-out of item {item.pk} is closed (expired or cancelled); ask for the next conflict"
    with pytest.raises(NotAssigned, match=whole(closed)):
        adjudicate(item, c, "Y", "late", now=expiry)
    taken = next_adjudication(campaign, d, now=expiry)
    assert (taken.item_id, taken.user_id) == (item.pk, d.pk)
    decision = adjudicate(item, d, "N", "no source", now=expiry + timedelta(seconds=1))
    assert decision.label == "N"
    taken.refresh_from_db()
    assert (taken.state, taken.closed_at) == (Assignment.State.DONE, expiry + timedelta(seconds=1))


@pytest.mark.django_db
def test_a_decision_closes_the_other_open_hand_outs_and_a_cancelled_one_refuses(setting):
    campaign, a, b, c, d = setting
    first, second = make_conflicts(campaign, a, b, 2)
    start = timezone.now()
    mine = next_adjudication(campaign, c, now=start)
    theirs = next_adjudication(campaign, d, now=start)
    assert {mine.item_id, theirs.item_id} == {first.pk, second.pk}
    # c decides d's item without a hand-out of it (allowed: no hand-out to check); d's hand-out is cancelled
    other = Item.objects.get(pk=theirs.item_id)
    decided_at = start + timedelta(seconds=5)
    adjudicate(other, c, "Y", "found it", now=decided_at)
    theirs.refresh_from_db()
    assert (theirs.state, theirs.closed_at) == (Assignment.State.CANCELLED, decided_at)
    mine.refresh_from_db()
    assert mine.state == Assignment.State.OPEN  # the other item's hand-out is untouched
    # a cancelled hand-out refuses though unexpired; d decides nothing
    Assignment.objects.filter(pk=mine.pk).update(state=Assignment.State.CANCELLED)
    mine_item = Item.objects.get(pk=mine.item_id)
    closed = (f"your adjudication hand-out of item {mine_item.pk} is closed (expired or cancelled); "
              "ask for the next conflict")
    with pytest.raises(NotAssigned, match=whole(closed)):
        adjudicate(mine_item, c, "Y", "late", now=decided_at)


@pytest.mark.django_db
def test_the_queue_goes_by_queue_key_then_id(setting):
    campaign, a, b, c, d = setting
    first, second, third = make_conflicts(campaign, a, b, 3)
    Item.objects.filter(pk=first.pk).update(queue_key=30)
    Item.objects.filter(pk=second.pk).update(queue_key=10)
    Item.objects.filter(pk=third.pk).update(queue_key=10)
    start = timezone.now()
    order = []
    for _ in range(3):
        handed = next_adjudication(campaign, c, now=start)
        order.append(handed.item_id)
        adjudicate(handed.item, c, "Y", "checked", now=start)
    assert order == [second.pk, third.pk, first.pk]
    assert next_adjudication(campaign, c, now=start) is None


@pytest.mark.django_db
def test_own_open_hand_out_comes_first_oldest_first(setting):
    campaign, a, b, c, d = setting
    first, second = make_conflicts(campaign, a, b, 2)
    start = timezone.now()
    Assignment.objects.create(item=second, user=c, kind=Assignment.Kind.ADJUDICATE, handed_out_at=start,
                              expires_at=start + timedelta(seconds=60))
    Assignment.objects.create(item=first, user=c, kind=Assignment.Kind.ADJUDICATE,
                              handed_out_at=start + timedelta(seconds=1), expires_at=start + timedelta(seconds=60))
    assert next_adjudication(campaign, c, now=start + timedelta(seconds=2)).item_id == second.pk


@pytest.mark.django_db
def test_a_flag_is_added_once(setting):
    campaign, a, b, c, d = setting
    for user in (a, b):
        assignment = next_item(campaign, user)
        submit_judgment(assignment.item, user, "Y", URL)
    agreed = Item.objects.get(status=Item.Status.AGREED)
    flag_for_adjudication(agreed, "two-yes-single-answer")
    returned = flag_for_adjudication(agreed, "two-yes-single-answer")
    flag_for_adjudication(agreed, "other")
    agreed.refresh_from_db()
    assert returned.flags == ["two-yes-single-answer"] and returned.status == Item.Status.CONFLICT
    assert agreed.flags == ["two-yes-single-answer", "other"]
    assert agreed.status == Item.Status.CONFLICT


@pytest.mark.django_db
def test_a_hand_out_lost_to_a_concurrent_one_is_retried_five_times_at_most(setting, monkeypatch):
    """The unique hand-out row and the re-check under the item's lock resolve races: the loser tries again (here
    the race is staged: the insert fails, or another adjudicator's hand-out lands between the query and the lock)."""
    import annotation.services.adjudication as adjudication

    campaign, a, b, c, d = setting
    first, second = make_conflicts(campaign, a, b, 2)
    Item.objects.filter(pk=second.pk).update(queue_key=first.queue_key + 1)  # first comes first
    start = timezone.now()
    create = Assignment.objects.create
    attempts = []

    def lose_once(**fields):
        attempts.append(fields["item"].pk)
        if len(attempts) == 1:
            raise adjudication.IntegrityError("staged: a concurrent hand-out won")
        return create(**fields)

    monkeypatch.setattr(Assignment.objects, "create", lose_once)
    handed = next_adjudication(campaign, c, now=start)
    assert (handed.item_id, attempts) == (first.pk, [first.pk, first.pk])

    def always_lose(**fields):
        attempts.append(fields["item"].pk)
        raise adjudication.IntegrityError("staged: a concurrent hand-out won")

    attempts.clear()
    monkeypatch.setattr(Assignment.objects, "create", always_lose)
    assert next_adjudication(campaign, d, now=start) is None
    assert attempts == [second.pk] * 5


@pytest.mark.django_db
def test_an_item_taken_between_the_query_and_the_lock_is_passed_over(setting, monkeypatch):
    import annotation.services.adjudication as adjudication

    campaign, a, b, c, d = setting
    first, second = make_conflicts(campaign, a, b, 2)
    Item.objects.filter(pk=second.pk).update(queue_key=first.queue_key + 1)  # first comes first
    start = timezone.now()
    lock = adjudication.lock_skipping
    calls = []

    class Locked:
        def __init__(self, item):
            self.item = item

        def first(self):
            return self.item

    def taken_meanwhile(queryset):
        calls.append(1)
        locked = lock(queryset).first()
        if len(calls) == 1:  # d's hand-out of the item just locked commits between the query and the lock
            Assignment.objects.create(item=locked, user=d, kind=Assignment.Kind.ADJUDICATE, handed_out_at=start,
                                      expires_at=start + timedelta(seconds=60))
        return Locked(locked)

    monkeypatch.setattr(adjudication, "lock_skipping", taken_meanwhile)
    handed = next_adjudication(campaign, c, now=start)
    assert (handed.item_id, handed.user_id, len(calls)) == (second.pk, c.pk, 2)
