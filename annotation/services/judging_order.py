"""Writes: a campaign's judging order and item budget, applied by the live work queue (issue 20).

``next_item`` (services/distribution) hands out by ``Item.queue_key`` and is not changed by an order: an order
only rewrites the ``queue_key`` of the items still queued (pending or in progress), 0 = first, spread evenly over
the key range so that gold checks (keys drawn uniformly at random) still blend in. Partly judged items keep
coming first (the queue's levels), and nothing an annotator sees changes.

Rewards are final labels. An adaptive order is re-keyed from the labels on a Celery task fired (on commit) by
the write that made a label final; the task re-keys once at least :func:`rekey_batch` new final labels exist
since the last re-key (about 200 re-keys over a campaign, the batch the simulator replays) and coalesces
concurrent requests with a compare-and-set on ``Campaign.order_rewards``. A re-key reads the pool's hits (one
query), orders the queue in numpy and writes the keys in batches of :data:`BATCH` rows, each its own
transaction that skips rows locked by a hand-out or a submit in flight (they keep their old key until the next
re-key; no waiting, so no deadlock with the services that lock one item at a time).

Budget: with ``item_budget`` set, next_item starts a new (untouched) pool item only while fewer than the budget
have been started (in progress or decided by people); it serialises those starts on the campaign row so that
concurrent requests cannot overshoot. Items already started are always finished.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from celery import signature
from django.db import transaction

from annotation.lib.judging_order import ADAPTIVE_ORDERS, ORDERS, JudgingState, order_items
from annotation.models import Campaign, Item, Label
from annotation.services._locking import lock_skipping, lock_waiting
from annotation.services.errors import AnnotationError
from annotation.task_names import EVALUATE_WHEN_DONE, REKEY_QUEUE

QUEUED = (Item.Status.PENDING, Item.Status.IN_PROGRESS)
STARTED = (Item.Status.IN_PROGRESS, Item.Status.AGREED, Item.Status.CONFLICT, Item.Status.ADJUDICATED)
FINAL = (Item.Status.AUTO_NEGATIVE, Item.Status.AGREED, Item.Status.ADJUDICATED, Item.Status.IMPORTED)
KEY_RANGE = 2**31 - 1
BATCH = 1000


@dataclass
class RekeyReport:
    order: str
    queued: int = 0
    written: int = 0
    skipped_locked: int = 0
    rewards: int = 0
    done: bool = False


def set_judging_order(campaign: Campaign, order: str, *, budget: int | None | str = "keep") -> Campaign:
    """Switch the campaign's order (also mid-campaign: the queue is re-keyed at once) and optionally its budget."""
    if order not in ORDERS:
        raise AnnotationError(f"unknown judging order {order!r}; orders: {', '.join(ORDERS)}")
    update = ["judging_order"]
    campaign.judging_order = order
    if budget != "keep":
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise AnnotationError("the item budget must be a whole number >= 0, or empty for no budget")
        campaign.item_budget = budget
        update.append("item_budget")
    campaign.save(update_fields=update)
    rekey_queue(campaign, force=True)
    return campaign


def final_label_count(campaign: Campaign) -> int:
    return Item.objects.filter(campaign=campaign, is_gold=False, status__in=FINAL).count()


def rekey_batch(queued: int) -> int:
    """New final labels that trigger a re-key: the simulator's batch (about 200 re-keys over a campaign)."""
    from annotation.lib.judging_simulation import default_batch

    return default_batch(queued)


def label_final(campaign: Campaign) -> None:
    """Call after a write that made an item's label final: an adaptive order re-keys (on commit, on Celery), and a
    campaign whose file declares an evaluation for when judging is done checks whether it is (no query here)."""
    if campaign.evaluate_when_done:
        campaign_id = campaign.pk
        transaction.on_commit(lambda: signature(EVALUATE_WHEN_DONE, args=(campaign_id,)).delay(), robust=True)
    if campaign.judging_order not in ADAPTIVE_ORDERS:
        return
    campaign_id = campaign.pk
    transaction.on_commit(lambda: signature(REKEY_QUEUE, args=(campaign_id,)).delay())


def rekey_queue(campaign: Campaign, *, force: bool = False) -> RekeyReport:
    """Recompute the queue order of ``campaign`` from its final labels (see the module doc)."""
    from annotation.selectors.pool_view import pool_view

    report = RekeyReport(campaign.judging_order)
    queued_rows = list(Item.objects.filter(campaign=campaign, is_gold=False, status__in=QUEUED, entry__isnull=False)
                       .values_list("pk", "entry_id"))
    report.queued = len(queued_rows)
    rewards = final_label_count(campaign)
    report.rewards = rewards
    seen = Campaign.objects.filter(pk=campaign.pk).values_list("order_rewards", flat=True).first() or 0
    if not force and rewards - seen < rekey_batch(report.queued):
        return report
    # claim this re-key; a concurrent task that read the same count gives way
    if not Campaign.objects.filter(pk=campaign.pk, order_rewards=seen).update(order_rewards=rewards) and not force:
        return report
    if force:
        Campaign.objects.filter(pk=campaign.pk).update(order_rewards=rewards)
    if not queued_rows:
        report.done = True
        return report
    view, index = pool_view(campaign.pool)
    judged = np.zeros(view.num_items, dtype=bool)
    positive = np.zeros(view.num_items, dtype=bool)
    final = Item.objects.filter(campaign=campaign, is_gold=False, status__in=FINAL, entry__isnull=False)
    rows = list(final.values_list("entry_id", "label").iterator(chunk_size=5000))
    if rows:
        done = index.items_of(np.array([entry for entry, _label in rows], dtype=np.int64))
        yes = np.array([label == Label.YES for _entry, label in rows], dtype=bool)
        judged[done[done >= 0]] = True
        positive[done[done >= 0]] = yes[done >= 0]
    pks = np.array([pk for pk, _entry in queued_rows], dtype=np.int64)
    items = index.items_of(np.array([entry for _pk, entry in queued_rows], dtype=np.int64))
    present = items >= 0
    ordered = order_items(campaign.judging_order, view, JudgingState(judged, positive), seed=campaign.pk,
                          among=items[present])
    position = np.empty(view.num_items, dtype=np.int64)
    position[ordered] = np.arange(ordered.size)
    spread = KEY_RANGE // max(ordered.size, 1)
    keys = np.full(len(pks), KEY_RANGE - 1, dtype=np.int64)  # entries outside the view (none normally): last
    keys[present] = position[items[present]] * spread
    report.written, report.skipped_locked = write_keys(pks, keys)
    report.done = True
    return report


def write_keys(pks: np.ndarray, keys: np.ndarray) -> tuple[int, int]:
    """Set ``queue_key`` of items ``pks`` in batches, skipping rows locked elsewhere; (written, skipped)."""
    written = skipped = 0
    order = np.argsort(pks)
    pks, keys = pks[order], keys[order]
    for start in range(0, len(pks), BATCH):
        batch_pks, batch_keys = pks[start:start + BATCH].tolist(), keys[start:start + BATCH].tolist()
        key_of = dict(zip(batch_pks, batch_keys))
        with transaction.atomic():
            rows = list(lock_skipping(Item.objects.filter(pk__in=batch_pks, status__in=QUEUED))
                        .order_by("pk").values_list("pk", "queue_key"))
            changed = [Item(pk=pk, queue_key=key_of[pk]) for pk, key in rows if key != key_of[pk]]
            Item.objects.bulk_update(changed, ["queue_key"], batch_size=BATCH)
        written += len(changed)
        skipped += len(batch_pks) - len(rows)
    return written, skipped


def budget_spent(campaign: Campaign) -> bool:
    """True when the campaign has a budget and that many pool items are started. Locks the campaign row until
    the end of the transaction (new starts under a budget are serialised)."""
    if campaign.item_budget is None:
        return False
    list(lock_waiting(Campaign.objects.filter(pk=campaign.pk)).values_list("pk", flat=True))
    started = Item.objects.filter(campaign=campaign, is_gold=False, status__in=STARTED).count()
    return started >= campaign.item_budget
