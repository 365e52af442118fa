"""Writes: handing out items to judge (SPEC 4.2, issue 4 "work distribution").

Guarantees, also under concurrency: an item is never handed to the same user twice (a unique constraint on
(item, user, kind) backs this up); an item never has more than ``judgments_per_item`` judgments + open
hand-outs (``Item.num_active``, changed only under the item's row lock); a user gets their own open hand-out
back before new work, and concurrent requests of one user never open a second one (each waits for the user's
membership row lock, see :func:`lock_member`); hand-outs not answered within the campaign's timeout are closed:
nothing is accepted on them, and they go back to the queue.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, connections, router, transaction
from django.db.models import BooleanField, Exists, OuterRef, Q, Subquery
from django.db.models.expressions import RawSQL
from django.utils import timezone

from annotation.models import Assignment, Campaign, Item, Membership, Role
from annotation.selectors.campaigns import has_role
from annotation.services._locking import lock_skipping, lock_waiting
from annotation.services.errors import NotAllowed, NotAssigned
from annotation.services.judging_order import budget_spent

QUEUE_STATUSES = (Item.Status.PENDING, Item.Status.IN_PROGRESS)
RETRIES = 5
# The statuses of the partial index item_queue_order written as SQL constants: SQLite uses a partial index only
# when the query repeats its condition with constants, never with bound parameters (issue 18: with `status IN
# (?, ?)` it sorted the campaign's queued items for every hand-out, 0.6 s for 76,583 items).
_QUEUED = RawSQL(f'"{Item._meta.db_table}"."status" IN ({", ".join(repr(str(s)) for s in QUEUE_STATUSES)})', (),
                 output_field=BooleanField())
#: next_item releases its campaign's expired hand-outs at most this often per process: hand-outs last minutes,
#: so a few seconds' delay changes nothing, and it spares a query on almost every call.
RELEASE_INTERVAL = timedelta(seconds=5)
_last_release: dict[tuple[int, datetime], datetime] = {}


def _status_after_release(item: Item) -> str:
    return Item.Status.PENDING if item.num_active == 0 and item.num_judgments == 0 else Item.Status.IN_PROGRESS


def release_expired(campaign: Campaign | None = None, *, now: datetime | None = None) -> int:
    """Expire open hand-outs past their time; their items return to the queue. Returns how many expired.

    Items another transaction holds are skipped (their hand-outs expire on a later call).
    """
    now = now or timezone.now()
    expired = Assignment.objects.filter(state=Assignment.State.OPEN, expires_at__lte=now)
    if campaign is not None:
        expired = expired.filter(item__campaign=campaign)
    # The common case (next_item calls this every time) is nothing to do: one indexed query, no savepoint.
    if not expired.exists():
        return 0
    released = 0
    with transaction.atomic():
        # Adjudication hand-outs carry no counters: they simply lapse.
        expired.filter(kind=Assignment.Kind.ADJUDICATE).update(state=Assignment.State.EXPIRED, closed_at=now)
        item_ids = expired.filter(kind=Assignment.Kind.JUDGE).values("item_id")
        for item in lock_skipping(Item.objects.filter(pk__in=item_ids)).order_by("pk"):
            count = Assignment.objects.filter(
                item=item, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN, expires_at__lte=now
            ).update(state=Assignment.State.EXPIRED, closed_at=now)
            if count:
                item.num_active = max(0, item.num_active - count)
                if item.status in QUEUE_STATUSES:
                    item.status = _status_after_release(item)
                item.save(update_fields=["num_active", "status", "updated_at"])
                released += count
    return released


def _release_due(campaign: Campaign, now: datetime) -> bool:
    key = (campaign.pk, campaign.created_at)  # a test database may reuse a pk, never with the same creation time
    last = _last_release.get(key)
    if last is not None and timedelta(0) <= now - last < RELEASE_INTERVAL:
        return False
    _last_release[key] = now
    return True


def lock_member(campaign: Campaign, user, role: str) -> None:
    """Lock ``user``'s ``role`` membership row of the campaign until the transaction ends, so that the user's
    concurrent requests for work run one after the other: each then sees the hand-out the one before opened
    (reading it in a later statement than this one: under READ COMMITTED a statement reads what was committed
    when it started). SQLite needs nothing: BEGIN IMMEDIATE already serialises every write transaction."""
    if not connections[router.db_for_write(Membership)].features.has_select_for_update:
        return
    rows = Membership.objects.filter(campaign=campaign, user=user, role=role).select_for_update()
    list(rows.values_list("pk", flat=True))


def open_hand_outs(campaign: Campaign | int, user, now: datetime):
    """The user's open, unexpired judging hand-outs in the campaign, oldest first (campaign and user: instances
    or pks)."""
    return Assignment.objects.filter(
        item__campaign=campaign, user=user, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN,
        expires_at__gt=now,
    ).order_by("handed_out_at", "pk")


def open_assignment(campaign: Campaign, user, *, now: datetime | None = None) -> Assignment | None:
    """The user's oldest open, unexpired judging hand-out in the campaign, if any."""
    return open_hand_outs(campaign, user, now or timezone.now()).select_related("item").first()


def _first_free_item(campaign: Campaign, user, limit: int, *, now: datetime | None = None,
                     started_only: bool = False) -> Item | None:
    """Lock and return the head of ``user``'s queue: the order is (hand-outs open on it, descending; gold checks
    count as 0), then ``queue_key``, then pk. The row carries ``own_hand_out``: the pk of the user's own open
    hand-out, if they hold one (read in the same query, which spares next_item a query of its own).

    Asked one level of open hand-outs at a time, each an index-ordered scan that stops at the first free row
    (indexes ``item_queue`` and ``item_queue_order``), instead of one query that sorts every queued item of the
    campaign on each call (that sort grew with the campaign and dominated the hand-out latency under load).
    """
    own = Subquery(open_hand_outs(campaign, user, now or timezone.now()).values("pk")[:1])
    for candidates in queue_levels(campaign, user, limit, started_only=started_only):
        candidates = candidates.annotate(own_hand_out=own).select_related("head", "relation", "tail")
        item = lock_skipping(candidates).first()
        if item is not None:
            item.campaign = campaign  # callers render the item: spare them a query
            return item
    return None


def queue_levels(campaign: Campaign | int, user, limit: int, *, started_only: bool = False) -> list:
    """The queue of ``user`` as querysets of items, one per level of open hand-outs (busiest first), each in
    queue order: the first free row of the first non-empty level is the head (see ``_first_free_item``).
    Campaign and user: instances or pks."""
    # Never handed to this user: probed per candidate row through the (item, user, kind) unique index, so the
    # cost does not grow with the user's history (a NOT IN over all their hand-outs did).
    seen = Exists(Assignment.objects.filter(item=OuterRef("pk"), user=user))
    # Items with open hand-outs are in progress (next_item sets both together), so each busy level is one
    # equality prefix of ``item_queue``.
    levels = [Q(status=Item.Status.IN_PROGRESS, num_active=busy, is_gold=False) for busy in range(limit - 1, 0, -1)]
    levels.append(_QUEUED & (Q(num_active=0) | Q(is_gold=True)))
    if started_only:  # items already judged once or handed out (a spent budget finishes only those)
        levels[-1] = Q(status=Item.Status.IN_PROGRESS, num_active=0, is_gold=False)
    return [Item.objects.filter(level, ~seen, campaign=campaign).order_by("queue_key", "pk") for level in levels]


def next_item(campaign: Campaign, user, *, now: datetime | None = None) -> Assignment | None:
    """Hand ``user`` an item to judge; None when nothing is left for them.

    Their own open hand-out comes back first (one open hand-out per person and campaign, also when their
    requests race). Otherwise the queue is: items still needing judgments that the user was never handed,
    partly judged items first (to finish them), then the campaign's shuffled order. Gold checks sit in the same
    queue and look like any other item; each is handed to every annotator once (no ``judgments_per_item`` cap)
    and ranks among the untouched items by its ``queue_key``. Annotators never see which kind of item they got:
    no item state, id or campaign counter that moves with a single judgment is shown to them (selectors/web).
    """
    if not has_role(campaign, user, Role.ANNOTATOR):
        raise NotAllowed(f"{user} is not an annotator of campaign {campaign.name}")
    now = now or timezone.now()
    limit = campaign.judgments_per_item
    for _attempt in range(RETRIES):
        try:
            with transaction.atomic():
                lock_member(campaign, user, Role.ANNOTATOR)
                if _release_due(campaign, now):
                    release_expired(campaign, now=now)
                item = _first_free_item(campaign, user, limit, now=now)
                if item is None or item.own_hand_out is not None:
                    return open_assignment(campaign, user, now=now)  # their own first; None: nothing left
                if not item.is_gold and item.num_active >= limit:  # changed under us before the lock: look again
                    continue
                if (campaign.item_budget is not None and not item.is_gold and item.num_judgments == 0
                        and item.num_active == 0 and budget_spent(campaign)):
                    # the budget is spent (issue 20): only items already started are finished
                    item = _first_free_item(campaign, user, limit, now=now, started_only=True)
                    if item is None or item.num_active >= limit:
                        return None
                assignment = Assignment.objects.create(
                    item=item, user=user, kind=Assignment.Kind.JUDGE, handed_out_at=now,
                    expires_at=now + timedelta(seconds=campaign.assignment_timeout_s),
                )
                item.num_active += 1
                item.status = Item.Status.IN_PROGRESS
                item.save(update_fields=["num_active", "status", "updated_at"])
                return assignment
        except IntegrityError:
            # The same user took this item in a concurrent request: try again (their hand-out comes back).
            continue
    return open_assignment(campaign, user, now=now)


def skip_item(item: Item, user, *, now: datetime | None = None) -> Assignment:
    """Give the item back to the others; it is never handed to ``user`` again."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = lock_waiting(Item.objects.filter(pk=item.pk)).get()
        assignment = Assignment.objects.filter(
            item=locked, user=user, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN
        ).first()
        if assignment is None:
            raise NotAssigned(f"item {item.pk} is not handed to {user} (nothing to skip)")
        if assignment.expires_at <= now:
            raise NotAssigned(f"the hand-out of item {item.pk} to {user} has expired (nothing to skip)")
        assignment.state = Assignment.State.SKIPPED
        assignment.closed_at = now
        assignment.save(update_fields=["state", "closed_at"])
        locked.num_active = max(0, locked.num_active - 1)
        if locked.status in QUEUE_STATUSES:
            locked.status = _status_after_release(locked)
        locked.save(update_fields=["num_active", "status", "updated_at"])
    return assignment
