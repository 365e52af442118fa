"""Reads: every count of a campaign's items that its pages show (statuses, automatic labels, reused labels,
flagged items, gold checks), from one grouped query.

Issue 18: at 76,583 items each page made four to eight separate counts, each reading every item row of the
campaign (about 90 ms each on SQLite at 5 M triples). The grouped columns and the flags are all in the
``item_counts`` index (annotation migration 0015), so the one query reads that index only, never the table.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from annotation.models import Campaign, Item, Label
from annotation.selectors.labels import FINAL_STATUSES

# Final labels no person gave in this campaign: the trivial rules' negatives, imported and reused labels.
AUTOMATIC_ORIGINS = (Item.Origin.RULE, Item.Origin.IMPORTED, Item.Origin.REUSED)


@dataclass(frozen=True)
class ItemCounts:
    """Counts of a campaign's items; every figure but the gold ones leaves the gold checks out."""

    by_status: dict[str, int]  # every status, 0 when none
    automatic: int  # final labels of AUTOMATIC_ORIGINS
    reused: int  # label origin reused (whatever the status)
    flagged: int  # carrying a consistency flag
    gold: int
    gold_yes: int
    gold_no: int

    @property
    def total(self) -> int:
        return sum(self.by_status.values())

    @property
    def decided(self) -> int:
        return sum(self.by_status[status] for status in FINAL_STATUSES)


def item_counts(campaign: Campaign | int) -> ItemCounts:
    rows = (
        Item.objects.filter(campaign=campaign)
        .values_list("is_gold", "status", "label_origin", "gold_answer")
        .annotate(n=Count("*"), flagged=Count("campaign", filter=~Q(flags=[])))
        .order_by()
    )
    by_status = {status: 0 for status in Item.Status.values}
    automatic = reused = flagged = gold = gold_yes = gold_no = 0
    for is_gold, status, origin, gold_answer, n, flagged_here in rows:
        if is_gold:
            gold += n
            gold_yes += n if gold_answer == Label.YES else 0
            gold_no += n if gold_answer == Label.NO else 0
            continue
        by_status[status] = by_status.get(status, 0) + n
        automatic += n if status in FINAL_STATUSES and origin in AUTOMATIC_ORIGINS else 0
        reused += n if origin == Item.Origin.REUSED else 0
        flagged += flagged_here
    return ItemCounts(by_status, automatic, reused, flagged, gold, gold_yes, gold_no)
