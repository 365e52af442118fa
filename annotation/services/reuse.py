"""Writes: reuse of final labels across rounds (issue 8). A campaign on a new or deeper pool of a KG takes
over the final label of every triple already decided in an earlier campaign on the same KG: its item gets
status ``imported``, origin ``reused``, the label (and the rule, for rule labels) and ``reused_from`` (the
earlier item), and is never sent to people. Deepening a pool from k=10 to k=20 thus only sends the new
triples to people.

Which labels count: final labels (unanimous, adjudicated, rule, audit, imported, reused) of non-gold items of
other campaigns on the same KG. When earlier campaigns disagree on a triple, nothing is reused for it and it
goes to people (counted in ``conflicting``); the most recent item wins as ``reused_from`` otherwise.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction

from annotation.models import Campaign, Item
from annotation.selectors.item_counts import item_counts
from annotation.selectors.labels import FINAL_STATUSES

BATCH = 2000


@dataclass
class ReuseReport:
    items: int = 0  # items that could be reused (pending, untouched)
    reused: int = 0
    conflicting: int = 0  # triples earlier campaigns labelled differently: left to people
    campaigns: tuple[str, ...] = ()  # the earlier campaigns labels came from


def reuse_labels(campaign: Campaign) -> ReuseReport:
    """Give every untouched pending item of ``campaign`` the final label of the same triple from earlier
    campaigns on the same KG (idempotent; items already in human hands are left alone)."""
    report = ReuseReport()
    kg_id = campaign.pool.sample.kg_id
    pending = {
        (h, r, t): pk
        for pk, h, r, t in Item.objects.filter(
            campaign=campaign, is_gold=False, status=Item.Status.PENDING, num_active=0, num_judgments=0
        ).values_list("pk", "head_id", "relation_id", "tail_id").iterator(chunk_size=5000)
    }
    report.items = len(pending)
    if not pending:
        return report
    earlier: dict[tuple[int, int, int], list[tuple[int, str, str, str]]] = defaultdict(list)
    rows = (
        Item.objects.filter(campaign__pool__sample__kg_id=kg_id, is_gold=False, status__in=FINAL_STATUSES)
        .exclude(campaign=campaign).exclude(label="")
        .values_list("pk", "head_id", "relation_id", "tail_id", "label", "rule", "campaign__name")
        .order_by("pk")
    )
    for pk, h, r, t, label, rule, name in rows.iterator(chunk_size=5000):
        if (h, r, t) in pending:
            earlier[(h, r, t)].append((pk, label, rule, name))
    by_update: dict[tuple[str, str], list[int]] = defaultdict(list)
    source_of: dict[int, int] = {}
    sources: set[str] = set()
    for triple, found in earlier.items():
        if len({label for _pk, label, _rule, _name in found}) > 1:
            report.conflicting += 1
            continue
        source_pk, label, rule, _name = found[-1]
        by_update[(label, rule)].append(pending[triple])
        source_of[pending[triple]] = source_pk
        sources.update(n for *_x, n in found)
    with transaction.atomic():
        for (label, rule), pks in by_update.items():
            for start in range(0, len(pks), BATCH):
                report.reused += Item.objects.filter(
                    pk__in=pks[start:start + BATCH], status=Item.Status.PENDING, num_active=0, num_judgments=0
                ).update(status=Item.Status.IMPORTED, label=label, label_origin=Item.Origin.REUSED, rule=rule)
        pks = list(source_of)
        for start in range(0, len(pks), BATCH):
            changed = [
                Item(pk=pk, reused_from_id=source_of[pk])
                for pk in Item.objects.filter(
                    pk__in=pks[start:start + BATCH], label_origin=Item.Origin.REUSED, reused_from__isnull=True
                ).values_list("pk", flat=True)
            ]
            Item.objects.bulk_update(changed, ["reused_from"], batch_size=BATCH)
    report.campaigns = tuple(sorted(sources))
    return report


def reused_count(campaign: Campaign) -> int:
    """How many of the campaign's items carry a label reused from an earlier campaign."""
    return item_counts(campaign).reused
