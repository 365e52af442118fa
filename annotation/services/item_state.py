"""Writes: an item's derived state (status, label, origin, counters), recomputed from its facts.

Every change to an item's label goes through here: a service that changes an item's judgments, adjudication,
open hand-outs, flags, or a decision stored on it (rule, import, expert label) calls :func:`recompute_item`, or
:func:`recompute_locked` inside the transaction that already holds the item's row lock (the locking rule of
``annotation.models``). The rules themselves are ``annotation.lib.item_state.derive_item_state``.

The hot judging paths (next item, submit, skip, expiry) keep their counters incrementally under the same lock;
``find_inconsistent_items`` checks any campaign against a from-scratch derivation and ``repair_items`` fixes
what differs (``manage.py repair_items``).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import astuple, dataclass

from django.db import transaction

from annotation.lib.item_state import ItemFacts, ItemState, derive_item_state
from annotation.models import Adjudication, Assignment, Campaign, Item, Judgment
from annotation.services._locking import lock_waiting

STATE_FIELDS = ("status", "label", "label_origin", "num_judgments", "num_active")


def stored_state(item: Item) -> ItemState:
    return ItemState(item.status, item.label, item.label_origin, item.num_judgments, item.num_active)


def item_facts(item: Item, judgments_per_item: int, answers: Iterable[str], open_handouts: int,
           adjudication: str | None) -> ItemFacts:
    return ItemFacts(
        is_gold=item.is_gold, judgments_per_item=judgments_per_item, answers=tuple(answers),
        open_handouts=open_handouts, adjudication=adjudication, flagged=bool(item.flags),
        stored_status=item.status, stored_label=item.label, stored_origin=item.label_origin,
    )


def settle_after_judgment(item: Item, judgments_per_item: int, answers: list[str]) -> None:
    """The submit path's decision, derived without a query from what it read under the item's lock: the item's
    answers (gold checks: only the submitter's, enough since they are never decided) and its counters. Sets
    status, label and origin on ``item``; the caller saves."""
    open_handouts = max(0, item.num_active - item.num_judgments)
    derived = derive_item_state(item_facts(item, judgments_per_item, answers, open_handouts, None))
    item.status, item.label, item.label_origin = derived.status, derived.label, derived.origin


def derive_from_database(item: Item, judgments_per_item: int) -> ItemState:
    """The state derived from the item's rows as they are now (three reads)."""
    answers = Judgment.objects.filter(item=item).order_by("given_at", "pk").values_list("answer", flat=True)
    open_handouts = Assignment.objects.filter(
        item=item, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN
    ).count()
    adjudication = Adjudication.objects.filter(item=item).values_list("label", flat=True).first()
    return derive_item_state(item_facts(item, judgments_per_item, list(answers), open_handouts, adjudication))


def recompute_locked(item: Item, *, judgments_per_item: int | None = None) -> list[str]:
    """Derive ``item``'s state and save what changed; the caller holds the item's row lock and passes the
    freshly locked instance. Returns the names of the fields that changed (empty: it was consistent)."""
    if judgments_per_item is None:
        judgments_per_item = Campaign.objects.values_list("judgments_per_item", flat=True).get(pk=item.campaign_id)
    changed = apply_state(item, derive_from_database(item, judgments_per_item))
    if changed:
        item.save(update_fields=[*changed, "updated_at"])
    return changed


def apply_state(item: Item, derived: ItemState) -> list[str]:
    """Set ``derived`` on ``item`` (not saved); returns the names of the fields that changed."""
    changed = []
    for field, value in zip(STATE_FIELDS, (derived.status, derived.label, derived.origin, derived.num_judgments,
                                           derived.num_active)):
        if getattr(item, field) != value:
            setattr(item, field, value)
            changed.append(field)
    return changed


def recompute_item(item: Item | int) -> Item:
    """Lock the item, derive its state from its facts and save it; returns the item as saved."""
    pk = item if isinstance(item, int) else item.pk
    with transaction.atomic():
        locked = lock_waiting(Item.objects.filter(pk=pk)).get()
        recompute_locked(locked)
    return locked


@dataclass(frozen=True)
class Mismatch:
    item_id: int
    stored: ItemState
    derived: ItemState

    def describe(self) -> str:
        names = ("status", "label", "origin", "num_judgments", "num_active")
        diffs = [f"{n} {s!r} -> {d!r}" for n, s, d in zip(names, astuple(self.stored), astuple(self.derived)) if s != d]
        return f"item {self.item_id}: " + ", ".join(diffs)


def find_inconsistent_items(campaign: Campaign) -> list[Mismatch]:
    """Items whose stored state differs from the state derived from their facts (four reads for the whole
    campaign, no lock: run it again, or use ``repair_items``, which re-checks each one under its lock)."""
    answers: dict[int, list[str]] = defaultdict(list)
    for item_id, answer in Judgment.objects.filter(item__campaign=campaign).order_by("item_id", "given_at", "pk") \
            .values_list("item_id", "answer").iterator(chunk_size=5000):
        answers[item_id].append(answer)
    open_handouts = Counter(
        Assignment.objects.filter(item__campaign=campaign, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN)
        .values_list("item_id", flat=True).iterator(chunk_size=5000)
    )
    adjudications = dict(Adjudication.objects.filter(item__campaign=campaign).values_list("item_id", "label"))
    found = []
    for item in Item.objects.filter(campaign=campaign).only(
        "pk", "is_gold", "flags", "status", "label", "label_origin", "num_judgments", "num_active"
    ).order_by("pk").iterator(chunk_size=5000):
        derived = derive_item_state(item_facts(item, campaign.judgments_per_item, answers.get(item.pk, ()),
                                           open_handouts.get(item.pk, 0), adjudications.get(item.pk)))
        if derived != stored_state(item):
            found.append(Mismatch(item.pk, stored_state(item), derived))
    return found


def repair_items(campaign: Campaign, *, dry_run: bool = False) -> list[Mismatch]:
    """Fix every item of the campaign whose stored state differs from the derived one, one item lock at a time.
    Returns the mismatches found (with ``dry_run``, nothing is written)."""
    found = find_inconsistent_items(campaign)
    if dry_run:
        return found
    fixed = []
    for mismatch in found:
        with transaction.atomic():
            locked = lock_waiting(Item.objects.filter(pk=mismatch.item_id)).get()
            before = stored_state(locked)
            if recompute_locked(locked, judgments_per_item=campaign.judgments_per_item):
                fixed.append(Mismatch(locked.pk, before, stored_state(locked)))
    return fixed
