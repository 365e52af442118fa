"""Writes: applying and reverting the trivial filter (automatic negatives, SPEC 4.1)."""
from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.db.models import Q

from annotation.models import Campaign, Item, Label
from annotation.selectors.filtering import FilterReport, filter_preview

BATCH = 2000


def apply_filter(campaign: Campaign, rules=None, *, threshold: float = 1.5) -> FilterReport:
    """Label N (origin rule, with the rule(s) that fired) every item the rules rule out that is still untouched
    (pending, no hand-out, no judgment); items already in human hands are counted in ``kept``."""
    report = filter_preview(campaign.pool, rules, threshold=threshold)
    by_rules: dict[str, list[int]] = defaultdict(list)
    for entry_pk, names in report.fired.items():
        by_rules[",".join(names)].append(entry_pk)
    applied = 0
    with transaction.atomic():
        for rule, entry_pks in by_rules.items():
            for start in range(0, len(entry_pks), BATCH):
                applied += Item.objects.filter(
                    campaign=campaign, entry_id__in=entry_pks[start:start + BATCH], is_gold=False,
                    status=Item.Status.PENDING, num_active=0, num_judgments=0,
                ).update(status=Item.Status.AUTO_NEGATIVE, label=Label.NO, label_origin=Item.Origin.RULE, rule=rule)
    fired = list(report.fired)
    kept = 0
    for start in range(0, len(fired), BATCH):
        kept += (
            Item.objects.filter(campaign=campaign, entry_id__in=fired[start:start + BATCH])
            .exclude(status=Item.Status.AUTO_NEGATIVE)
            .count()
        )
    report.applied = applied
    report.kept = kept
    return report


def revert_auto_labels(campaign: Campaign, *, item_ids: list[int] | None = None, rule: str | None = None) -> int:
    """Send automatically labelled items back to human judging (all of them, the given ones, or those of one
    rule). Returns how many went back."""
    items = Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE)
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    if rule:
        items = items.filter(
            Q(rule=rule) | Q(rule__startswith=f"{rule},") | Q(rule__endswith=f",{rule}") | Q(rule__contains=f",{rule},")
        )
    return items.update(status=Item.Status.PENDING, label="", label_origin="", rule="")
