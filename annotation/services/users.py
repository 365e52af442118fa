"""Writes: retiring users. A user who was ever handed work (judgments, hand-outs, adjudications, expert reviews,
label history) is deactivated, never deleted: their labels are the product and their hand-outs are counted
on items. Deactivation closes their open hand-outs and recomputes those items, so the work goes back to the
queue at once instead of after the hand-outs' timeout."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from annotation.models import Assignment, Item
from annotation.services._locking import lock_waiting
from annotation.services.item_state import recompute_locked
from kgpool.deletion import find_blockers


@dataclass
class RetireReport:
    username: str
    deleted: bool  # True: the user had no history and was deleted; False: deactivated
    history: list[str]  # what they have (e.g. "10 judgments"), when deactivated
    cancelled: int = 0  # open hand-outs closed
    items: int = 0  # items recomputed

    def message(self) -> str:
        if self.deleted:
            return f"user {self.username} deleted"
        kept = f", not deleted: they have {'; '.join(self.history)}" if self.history else ""
        return (f"user {self.username} deactivated{kept}. "
                f"{self.cancelled} open hand-out(s) cancelled, {self.items} item(s) back in the queue.")


def work_history(user) -> list[str]:
    """What ties ``user`` to judged data (empty: nothing; the user may be deleted)."""
    counts: dict[str, int] = {}
    for blocker in find_blockers([user]):  # a model reached twice (label versions: author, changer) counts once
        name = str(blocker.model._meta.verbose_name_plural)
        counts[name] = max(counts.get(name, 0), blocker.count)
    return [f"{count:,} {name}" for name, count in counts.items()]


def deactivate_user(user, *, now: datetime | None = None) -> RetireReport:
    """Deactivate ``user`` (no login, no API token) and cancel their open hand-outs, item by item under each
    item's lock, recomputing the item's counters and status."""
    now = now or timezone.now()
    User = get_user_model()
    User.objects.filter(pk=user.pk).update(is_active=False)
    user.is_active = False
    report = RetireReport(user.get_username(), False, work_history(user))
    item_ids = sorted(set(
        Assignment.objects.filter(user=user, state=Assignment.State.OPEN).values_list("item_id", flat=True)
    ))
    for item_id in item_ids:
        with transaction.atomic():
            item = lock_waiting(Item.objects.filter(pk=item_id)).get()
            report.cancelled += Assignment.objects.filter(item=item, user=user, state=Assignment.State.OPEN).update(
                state=Assignment.State.CANCELLED, closed_at=now
            )
            recompute_locked(item)
            report.items += 1
    return report


def retire_user(user, *, now: datetime | None = None) -> RetireReport:
    """Delete ``user`` when nothing ties them to judged data, else deactivate them (``deactivate_user``)."""
    if work_history(user):
        return deactivate_user(user, now=now)
    username = user.get_username()
    try:
        with transaction.atomic():
            user.delete()
    except ProtectedError:  # handed work since the check
        return deactivate_user(user, now=now)
    return RetireReport(username, True, [])
