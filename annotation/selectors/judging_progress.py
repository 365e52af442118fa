"""Reads: the judging-order dashboard of a campaign (issue 20): positives found, the estimate of those still
unjudged, ranking stability (``annotation/lib/judging_progress.py``), budget use."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from annotation.lib.judging_order import JudgingState
from annotation.lib.judging_progress import ranking_stability, unjudged_positives_estimate
from annotation.models import Campaign, Item, Label
from annotation.selectors.pool_view import pool_view
from annotation.services.judging_order import FINAL, STARTED


@dataclass
class OrderProgress:
    order: str
    budget: int | None
    started: int
    pool_items: int
    final: int
    positives: int
    estimate_unjudged: float
    stability: list[dict] = field(default_factory=list)
    step: int = 200


def order_progress(campaign: Campaign, *, step: int = 200) -> OrderProgress:
    view, index = pool_view(campaign.pool)
    items = Item.objects.filter(campaign=campaign, is_gold=False, entry__isnull=False)
    # the order labels became final: by the time of the item's last write (final items change no more)
    rows = list(items.filter(status__in=FINAL).order_by("updated_at", "pk").values_list("entry_id", "label"))
    judged = np.zeros(view.num_items, dtype=bool)
    positive = np.zeros(view.num_items, dtype=bool)
    sequence = index.items_of(np.array([entry for entry, _label in rows], dtype=np.int64))
    yes = np.array([label == Label.YES for _entry, label in rows], dtype=bool)
    keep = sequence >= 0
    sequence, yes = sequence[keep], yes[keep]
    judged[sequence] = True
    positive[sequence] = yes
    return OrderProgress(
        order=campaign.get_judging_order_display(), budget=campaign.item_budget,
        started=items.filter(status__in=STARTED).count(), pool_items=view.num_items, final=int(judged.sum()),
        positives=int(positive.sum()),
        estimate_unjudged=unjudged_positives_estimate(view, JudgingState(judged, positive)),
        stability=ranking_stability(view, sequence, positive, step=step), step=step,
    )
