"""Writes: the adjudication queue (conflicts decided by a third person) and expert audit labels."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Adjudication, Assignment, Campaign, Item, Judgment, Role
from annotation.selectors.campaigns import has_role
from annotation.services._locking import lock_skipping, lock_waiting
from annotation.services.answers import parse_answer
from annotation.services.distribution import lock_member
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed, NotAssigned
from annotation.services.item_state import recompute_locked
from annotation.services.label_history import record_submitted

RETRIES = 5


def next_adjudication(campaign: Campaign, user, *, now: datetime | None = None) -> Assignment | None:
    """Hand ``user`` a conflict to decide: never one they judged, never one another adjudicator holds."""
    if not has_role(campaign, user, Role.ADJUDICATOR):
        raise NotAllowed(f"{user} is not an adjudicator of campaign {campaign.name}")
    now = now or timezone.now()
    adjudicate = Assignment.Kind.ADJUDICATE
    for _attempt in range(RETRIES):
        try:
            with transaction.atomic():
                lock_member(campaign, user, Role.ADJUDICATOR)  # their concurrent requests: one hand-out
                own = (
                    Assignment.objects.filter(
                        item__campaign=campaign, item__status=Item.Status.CONFLICT, user=user, kind=adjudicate,
                        state=Assignment.State.OPEN, expires_at__gt=now,
                    )
                    .select_related("item")
                    .order_by("handed_out_at", "pk")
                    .first()
                )
                if own is not None:
                    return own
                judged = Judgment.all_objects.filter(user=user, item__campaign=campaign).values("item_id")  # undone too
                mine = Assignment.objects.filter(user=user, kind=adjudicate, item__campaign=campaign).values("item_id")
                held = Assignment.objects.filter(
                    kind=adjudicate, state=Assignment.State.OPEN, expires_at__gt=now, item__campaign=campaign
                ).values("item_id")
                candidates = (
                    Item.objects.filter(campaign=campaign, status=Item.Status.CONFLICT)
                    .exclude(pk__in=judged)
                    .exclude(pk__in=mine)
                    .exclude(pk__in=held)
                    .order_by("queue_key", "pk")
                )
                item = lock_skipping(candidates).first()
                if item is None:
                    return None
                if Assignment.objects.filter(
                    item=item, kind=adjudicate, state=Assignment.State.OPEN, expires_at__gt=now
                ).exists():
                    continue
                return Assignment.objects.create(
                    item=item, user=user, kind=adjudicate, handed_out_at=now,
                    expires_at=now + timedelta(seconds=campaign.assignment_timeout_s),
                )
        except IntegrityError:
            continue
    return None


def adjudicate(item: Item, user, label: str, reason: str, *, now: datetime | None = None) -> Adjudication:
    """Record the final label of a conflict with its reason. The adjudicator cannot be one of the judges.

    Repeating the same decision returns the recorded adjudication. An adjudicator who was handed the item
    decides only while that hand-out is open and unexpired (NotAssigned otherwise: once lapsed, the conflict
    may be with another adjudicator).
    """
    campaign = item.campaign
    if not has_role(campaign, user, Role.ADJUDICATOR):
        raise NotAllowed(f"{user} is not an adjudicator of campaign {campaign.name}")
    label = parse_answer(label)
    reason = (reason or "").strip()
    if not reason:
        raise AnnotationError("an adjudication needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        locked = lock_waiting(Item.objects.filter(pk=item.pk)).get()
        if Judgment.all_objects.filter(item=locked, user=user).exists():  # an undone answer too
            raise NotAllowed(f"{user} judged item {item.pk} and cannot adjudicate it")
        if locked.status != Item.Status.CONFLICT:
            existing = Adjudication.objects.filter(item=locked).first()
            if existing is not None and existing.adjudicator_id == user.pk and existing.label == label:
                return existing
            raise InvalidState(f"item {item.pk} is {locked.get_status_display()}, not a conflict to adjudicate")
        handed = Assignment.objects.filter(item=locked, user=user, kind=Assignment.Kind.ADJUDICATE).first()
        if handed is not None and (handed.state != Assignment.State.OPEN or handed.expires_at <= now):
            raise NotAssigned(f"your adjudication hand-out of item {item.pk} is closed (expired or cancelled); "
                              "ask for the next conflict")
        decision = Adjudication.objects.create(item=locked, adjudicator=user, label=label, reason=reason, decided_at=now)
        record_submitted(decision, now)
        recompute_locked(locked, judgments_per_item=campaign.judgments_per_item)
        open_ = Assignment.objects.filter(item=locked, kind=Assignment.Kind.ADJUDICATE, state=Assignment.State.OPEN)
        open_.filter(user=user).update(state=Assignment.State.DONE, closed_at=now)
        open_.update(state=Assignment.State.CANCELLED, closed_at=now)
    from annotation.services.judging_order import label_final

    label_final(campaign)  # the label is final: the reward of adaptive orders
    return decision


def flag_for_adjudication(item: Item, flag: str) -> Item:
    """Send a decided (or pending) item to the adjudication queue with a consistency flag (issue 8)."""
    with transaction.atomic():
        locked = lock_waiting(Item.objects.filter(pk=item.pk)).get()
        if flag not in locked.flags:
            locked.flags = [*locked.flags, flag]
            locked.save(update_fields=["flags", "updated_at"])
        recompute_locked(locked)  # an agreed item becomes a conflict (services/item_state)
    return locked
