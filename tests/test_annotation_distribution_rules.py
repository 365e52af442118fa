"""The hand-out rules of distribution.py, case by case (issue 19: each rule's mutants): the queue's levels
(busiest first, then queue_key; gold checks uncapped among the untouched items), a spent budget, the expiry
sweep (to the millisecond, what it counts, closes and re-queues), how often next_item sweeps, skipping, the
staged races (an item filled before the lock, a hand-out lost to a concurrent one) and the whole messages.
Times are two hours in the past, so that a rule that reads the wall clock instead of ``now`` shows."""
from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

import annotation.services.distribution as distribution
from annotation.models import Assignment, Campaign, Item, Role
from annotation.services.distribution import _release_due, next_item, queue_levels, release_expired, skip_item
from annotation.services.errors import NotAllowed, NotAssigned
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users
from tests._raises_support import whole

URL = "https://en.wikipedia.org/wiki/X"
TIMEOUT = 60


def ordered_campaign(tmp_path, *, items: int, per_item: int = 2, budget: int | None = None, name: str = "star"):
    """A campaign whose items come in pk order (queue_key 0, 1, ...); returns it with its items' pks."""
    campaign = star_campaign(tmp_path, items=items, name=name, assignment_timeout_s=TIMEOUT)
    Campaign.objects.filter(pk=campaign.pk).update(judgments_per_item=per_item, item_budget=budget)
    campaign.refresh_from_db()
    pks = list(Item.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    for key, pk in enumerate(pks):
        Item.objects.filter(pk=pk).update(queue_key=key)
    return campaign, pks


def state(pk: int) -> tuple[int, int, str]:
    item = Item.objects.get(pk=pk)
    return item.num_active, item.num_judgments, item.status


def past() -> object:
    return timezone.now() - timedelta(hours=2)


@pytest.mark.django_db
def test_only_annotators_get_work_in_whole(tmp_path):
    campaign, _ = ordered_campaign(tmp_path, items=1)
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    with pytest.raises(NotAllowed, match=whole(f"{adjudicator} is not an annotator of campaign {campaign.name}")):
        next_item(campaign, adjudicator)


@pytest.mark.django_db
def test_own_hand_out_comes_back_at_the_given_time(tmp_path):
    campaign, (x0, x1) = ordered_campaign(tmp_path, items=2)
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    start = past()
    first = next_item(campaign, a, now=start)
    assert (first.item_id, first.handed_out_at, first.expires_at) == (x0, start, start + timedelta(seconds=TIMEOUT))
    assert first.item.campaign_id == campaign.pk and first.item.campaign is campaign
    again = next_item(campaign, a, now=start + timedelta(seconds=TIMEOUT - 1))
    assert again.pk == first.pk
    assert state(x0) == (1, 0, Item.Status.IN_PROGRESS) and state(x1) == (0, 0, Item.Status.PENDING)


@pytest.mark.django_db
def test_busiest_level_first_then_queue_key(tmp_path):
    """Three per item: an item with 2 open hand-outs before one with 1, before the untouched ones."""
    campaign, (x0, x1, x2) = ordered_campaign(tmp_path, items=3, per_item=3)
    Item.objects.filter(pk=x2).update(status=Item.Status.IN_PROGRESS, num_active=2)
    Item.objects.filter(pk=x1).update(status=Item.Status.IN_PROGRESS, num_active=1)
    start = past()
    got = [next_item(campaign, user, now=start).item_id for user in users(campaign, Role.ANNOTATOR, 4)]
    assert got == [x2, x1, x1, x0]
    assert [state(pk)[0] for pk in (x0, x1, x2)] == [1, 3, 3]
    (late,) = users(campaign, Role.ANNOTATOR, 1, prefix="late")
    assert next_item(campaign, late, now=start).item_id == x0  # x1 and x2 are full
    assert state(x0) == (2, 0, Item.Status.IN_PROGRESS)


@pytest.mark.django_db
def test_queue_levels_by_default_end_with_every_untouched_item(tmp_path):
    """What the next-page selector and the PostgreSQL claim read: the busy levels, then the untouched items and
    gold checks, each in queue order, the user's own items left out (campaign and user as instances or pks)."""
    campaign, (x0, x1, x2, x3) = ordered_campaign(tmp_path, items=4, per_item=4)
    Item.objects.filter(pk=x3).update(status=Item.Status.IN_PROGRESS, num_active=1)
    Item.objects.filter(pk=x2).update(status=Item.Status.IN_PROGRESS, num_active=2)
    Item.objects.filter(pk=x1).update(is_gold=True, gold_answer="Y", status=Item.Status.IN_PROGRESS, num_active=4)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    assert next_item(campaign, a, now=past()).item_id == x2  # now 3 of 4
    expected = {a: [[], [], [x3], [x0, x1]], b: [[x2], [], [x3], [x0, x1]]}
    for user, levels in expected.items():
        for who in ((campaign, user), (campaign.pk, user.pk)):
            assert [list(level.values_list("pk", flat=True)) for level in queue_levels(*who, 4)] == levels


@pytest.mark.django_db
def test_gold_checks_are_not_capped_and_wait_behind_busy_items(tmp_path):
    campaign, (g, x1, x2) = ordered_campaign(tmp_path, items=3, per_item=2)
    Item.objects.filter(pk=g).update(is_gold=True, gold_answer="Y", status=Item.Status.IN_PROGRESS, num_active=3)
    Item.objects.filter(pk=x1).update(status=Item.Status.IN_PROGRESS, num_active=1)
    start = past()
    got = [next_item(campaign, user, now=start).item_id for user in users(campaign, Role.ANNOTATOR, 3)]
    assert got == [x1, g, g]
    assert [state(pk)[0] for pk in (g, x1, x2)] == [5, 2, 0]


@pytest.mark.django_db
def test_a_spent_budget_finishes_started_items_only(tmp_path):
    """Budget 2, two per item: x0 held by someone, x2 judged once (num_active counts both: they are started, the
    budget is spent), x1 untouched, the gold check g before x1 in queue order."""
    campaign, (x0, g, x1, x2) = ordered_campaign(tmp_path, items=4, per_item=2, budget=2)
    Item.objects.filter(pk=x0).update(status=Item.Status.IN_PROGRESS, num_active=1)
    Item.objects.filter(pk=x2).update(status=Item.Status.IN_PROGRESS, num_active=1, num_judgments=1)
    Item.objects.filter(pk=g).update(is_gold=True, gold_answer="Y")
    u1, u2, u3 = users(campaign, Role.ANNOTATOR, 3)
    start = past()
    assert next_item(campaign, u1, now=start).item_id == x0  # started, never judged: finished first
    assert next_item(campaign, u2, now=start).item_id == x2
    assert next_item(campaign, u3, now=start).item_id == g  # gold checks are not held back
    skip_item(Item.objects.get(pk=g), u3, now=start)
    assert next_item(campaign, u3, now=start) is None  # x1 is next, but never started
    assert state(x1) == (0, 0, Item.Status.PENDING)


@pytest.mark.django_db
@pytest.mark.parametrize("per_item", [1, 3])
def test_a_spent_budget_gives_nothing_new_at_any_judgments_per_item(tmp_path, per_item):
    campaign, (x0, x1) = ordered_campaign(tmp_path, items=2, per_item=per_item, budget=1)
    a, *others = users(campaign, Role.ANNOTATOR, per_item + 1)
    start = past()
    assert next_item(campaign, a, now=start).item_id == x0
    skip_item(Item.objects.get(pk=x0), a, now=start)  # x0 back to pending: nothing started
    assert next_item(campaign, a, now=start).item_id == x1  # started: the budget of 1 is spent
    assert next_item(campaign, a, now=start).item_id == x1  # their own hand-out back
    got = [getattr(next_item(campaign, user, now=start), "item_id", None) for user in others]
    assert got == [x1] * (per_item - 1) + [None]  # x1 filled up, then only x0 is left: never started
    assert state(x0) == (0, 0, Item.Status.PENDING)


@pytest.mark.django_db
def test_an_unspent_budget_hands_out_untouched_items(tmp_path):
    campaign, (x0, x1) = ordered_campaign(tmp_path, items=2, per_item=2, budget=2)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = past()
    assert next_item(campaign, a, now=start).item_id == x0
    skip_item(Item.objects.get(pk=x0), a, now=start)
    assert next_item(campaign, a, now=start).item_id == x1  # one item started of two: not spent
    assert next_item(campaign, b, now=start).item_id == x1  # busy first


@pytest.mark.django_db
def test_the_sweep_counts_closes_and_requeues_to_the_millisecond(tmp_path):
    """a, b on x0 (b 30 s later); c judged x1, then d holds it; e, f on x2; g on x3, flagged for adjudication
    meanwhile; an adjudicator's hand-out on x2; and one hand-out in another campaign: all handed out at
    start. (num_active counts the judgments too.)"""
    campaign, (x0, x1, x2, x3) = ordered_campaign(tmp_path, items=4, per_item=2)
    other, (y0,) = ordered_campaign(tmp_path, items=1, name="other")
    a, b, c, d, e, f, g = users(campaign, Role.ANNOTATOR, 7)
    (adjudicator,) = users(campaign, Role.ADJUDICATOR, 1)
    (z,) = users(other, Role.ANNOTATOR, 1)
    start = past()
    expiry = start + timedelta(seconds=TIMEOUT)
    assert next_item(campaign, a, now=start).item_id == x0
    assert next_item(campaign, b, now=start + timedelta(seconds=30)).item_id == x0
    assert next_item(campaign, c, now=start).item_id == x1
    submit_judgment(Item.objects.get(pk=x1), c, "Y", URL, now=start)
    assert next_item(campaign, d, now=start).item_id == x1
    assert next_item(campaign, e, now=start).item_id == x2
    assert next_item(campaign, f, now=start).item_id == x2
    assert next_item(campaign, g, now=start).item_id == x3
    Item.objects.filter(pk=x3).update(status=Item.Status.CONFLICT)  # flagged meanwhile
    lapsing = Assignment.objects.create(item_id=x2, user=adjudicator, kind=Assignment.Kind.ADJUDICATE,
                                        handed_out_at=start, expires_at=expiry)
    assert next_item(other, z, now=start).item_id == y0

    assert release_expired(campaign, now=expiry - timedelta(milliseconds=1)) == 0
    assert Assignment.objects.filter(state=Assignment.State.OPEN).count() == 8
    assert release_expired(campaign, now=expiry) == 5  # a, d, e, f, g; b's runs 30 s more
    closed = {pk: (state_, closed_at) for pk, state_, closed_at in
              Assignment.objects.exclude(state=Assignment.State.OPEN).values_list("user", "state", "closed_at")}
    assert closed == {user.pk: ("expired", expiry) for user in (a, d, e, f, g, adjudicator)} | {c.pk: ("done", start)}
    lapsing.refresh_from_db()
    assert (lapsing.state, lapsing.closed_at) == (Assignment.State.EXPIRED, expiry)
    assert state(x0) == (1, 0, Item.Status.IN_PROGRESS)  # b still holds it
    assert state(x1) == (1, 1, Item.Status.IN_PROGRESS)  # judged once
    assert state(x2) == (0, 0, Item.Status.PENDING)
    assert state(x3) == (0, 0, Item.Status.CONFLICT)  # stays out of the queue
    assert state(y0) == (1, 0, Item.Status.IN_PROGRESS)  # another campaign
    assert release_expired(campaign, now=expiry) == 0
    assert release_expired(now=start + timedelta(seconds=90)) == 2  # every campaign: b's and z's
    assert state(x0) == (0, 0, Item.Status.PENDING) and state(y0) == (0, 0, Item.Status.PENDING)


def test_next_item_sweeps_at_most_every_five_seconds_per_campaign():
    start = past()
    campaign = SimpleNamespace(pk=-1, created_at=start)
    assert _release_due(campaign, start) is True
    assert _release_due(campaign, start) is False
    assert _release_due(campaign, start + timedelta(seconds=5) - timedelta(microseconds=1)) is False
    assert _release_due(campaign, start + timedelta(seconds=5)) is True
    assert _release_due(campaign, start + timedelta(seconds=6)) is False
    assert _release_due(campaign, start) is True  # the clock went back (a test's or an earlier now)
    assert _release_due(SimpleNamespace(pk=-1, created_at=start + timedelta(days=1)), start) is True  # pk reused


@pytest.mark.django_db
def test_next_item_sweeps_the_expired_hand_outs_first(tmp_path):
    campaign, (x0,) = ordered_campaign(tmp_path, items=1, per_item=1)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = past()
    assert next_item(campaign, a, now=start).item_id == x0
    swept = start + timedelta(seconds=TIMEOUT - 1)
    assert next_item(campaign, b, now=swept) is None  # full; swept (nothing had expired)
    # a's hand-out lapses at TIMEOUT; the next sweep is due 5 s after the last one
    assert next_item(campaign, b, now=swept + timedelta(seconds=5) - timedelta(milliseconds=1)) is None
    assert next_item(campaign, b, now=swept + timedelta(seconds=5)).item_id == x0


@pytest.mark.django_db
def test_skip_in_whole(tmp_path):
    campaign, (x0, x1, x2) = ordered_campaign(tmp_path, items=3, per_item=2)
    a, b, c, d = users(campaign, Role.ANNOTATOR, 4)
    start = past()
    with pytest.raises(NotAssigned, match=whole(f"item {x0} is not handed to {a} (nothing to skip)")):
        skip_item(Item.objects.get(pk=x0), a, now=start)
    assert [next_item(campaign, user, now=start).item_id for user in (a, b, c)] == [x0, x0, x1]
    expiry = start + timedelta(seconds=TIMEOUT)
    with pytest.raises(NotAssigned, match=whole(f"the hand-out of item {x1} to {c} has expired (nothing to skip)")):
        skip_item(Item.objects.get(pk=x1), c, now=expiry)
    skipped = skip_item(Item.objects.get(pk=x0), a, now=expiry - timedelta(milliseconds=1))
    skipped.refresh_from_db()
    assert (skipped.state, skipped.closed_at) == (Assignment.State.SKIPPED, expiry - timedelta(milliseconds=1))
    assert state(x0) == (1, 0, Item.Status.IN_PROGRESS)  # b still holds it
    skip_item(Item.objects.get(pk=x0), b, now=start)
    assert state(x0) == (0, 0, Item.Status.PENDING)
    with pytest.raises(NotAssigned, match=whole(f"item {x0} is not handed to {a} (nothing to skip)")):
        skip_item(Item.objects.get(pk=x0), a, now=start)  # skipped already
    submit_judgment(Item.objects.get(pk=x1), c, "Y", URL, now=start)
    assert next_item(campaign, d, now=start).item_id == x1  # started: before x0
    skip_item(Item.objects.get(pk=x1), d, now=start)
    assert state(x1) == (1, 1, Item.Status.IN_PROGRESS)  # judged once (num_active counts the judgment)
    assert next_item(campaign, c, now=start).item_id == x0
    Item.objects.filter(pk=x0).update(status=Item.Status.CONFLICT)  # flagged meanwhile
    skip_item(Item.objects.get(pk=x0), c, now=start)
    assert state(x0) == (0, 0, Item.Status.CONFLICT)


@pytest.mark.django_db
def test_an_item_filled_before_the_lock_is_looked_up_again(tmp_path, monkeypatch):
    """Staged: between the queue query and the row lock the head item fills up (on PostgreSQL the locked row is
    read after the other transaction committed); next_item looks again and hands out the next item."""
    campaign, (x0, x1) = ordered_campaign(tmp_path, items=2, per_item=2)
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    first_free = distribution._first_free_item
    calls = []

    def filled_meanwhile(campaign, user, limit, **options):
        item = first_free(campaign, user, limit, **options)
        calls.append(item.pk)
        if len(calls) == 1:
            Item.objects.filter(pk=item.pk).update(status=Item.Status.IN_PROGRESS, num_active=limit)
            item.num_active, item.status = limit, Item.Status.IN_PROGRESS
        return item

    monkeypatch.setattr(distribution, "_first_free_item", filled_meanwhile)
    handed = next_item(campaign, a, now=past())
    assert (handed.item_id, calls) == (x1, [x0, x1])
    assert state(x0)[0] == 2 and state(x1)[0] == 1


@pytest.mark.django_db
def test_a_hand_out_lost_to_a_concurrent_one_is_retried_five_times_at_most(tmp_path, monkeypatch):
    """Staged: the insert of the hand-out fails on the unique (item, user, kind) row, as when the same user's
    concurrent request took the item first; next_item tries again, at most five times."""
    campaign, (x0, x1) = ordered_campaign(tmp_path, items=2, per_item=2)
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = past()
    create = Assignment.objects.create
    attempts = []

    def lose_once(**fields):
        attempts.append(fields["item"].pk)
        if len(attempts) == 1:
            raise distribution.IntegrityError("staged: a concurrent hand-out won")
        return create(**fields)

    monkeypatch.setattr(Assignment.objects, "create", lose_once)
    assert next_item(campaign, a, now=start).item_id == x0
    assert attempts == [x0, x0]

    def always_lose(**fields):
        attempts.append(fields["item"].pk)
        raise distribution.IntegrityError("staged: a concurrent hand-out won")

    attempts.clear()
    monkeypatch.setattr(Assignment.objects, "create", always_lose)
    assert next_item(campaign, b, now=start) is None
    assert attempts == [x0] * 5
    assert next_item(campaign, a, now=start).item_id == x0  # an own hand-out needs no insert
    assert state(x0)[0] == 1
