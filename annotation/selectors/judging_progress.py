"""Reads: the judging-order dashboard of a campaign (issue 20): positives found, the estimate of those still
unjudged, ranking stability (``annotation/lib/judging_progress.py``), budget use."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import connections
from django.db.models import Case, When

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


def _int_rows(queryset, width: int) -> np.ndarray:
    """The integer columns of ``queryset`` as an (n, width) array, fetched at once (every final label of a
    finished 76,583-item campaign: the ORM's chunked fetch and per-row tuples took half of the page's time)."""
    sql, params = queryset.query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, width)


def order_progress(campaign: Campaign, *, step: int = 200) -> OrderProgress:
    view, index = pool_view(campaign.pool)
    items = Item.objects.filter(campaign=campaign, is_gold=False, entry__isnull=False)
    # the order labels became final: by the time of the item's last write (final items change no more)
    final = (items.filter(status__in=FINAL).order_by("updated_at", "pk")
             .annotate(yes=Case(When(label=Label.YES, then=1), default=0)).values_list("entry_id", "yes"))
    rows = _int_rows(final, 2)
    judged = np.zeros(view.num_items, dtype=bool)
    positive = np.zeros(view.num_items, dtype=bool)
    sequence = index.items_of(rows[:, 0])
    yes = rows[:, 1].astype(bool)
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
