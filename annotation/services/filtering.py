"""Writes: applying and reverting the trivial filter (automatic negatives, SPEC 4.1).

An automatic negative records every applied rule that covers it in ``Item.rule`` (``type,cardinality``), in the
order of ``RULES``. Applying a rule again, or another rule, adds to that list; reverting a rule takes it off,
and only an item left with no rule goes back to human judging. Every write of an item's status / label /
origin / rule goes through the three small functions at the bottom.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from annotation.lib.rules import RULES, parse_rules
from annotation.lib.type_rule import TypeOptions
from annotation.models import Campaign, Item, Label
from annotation.selectors.filtering import FilterReport, filter_preview

BATCH = 2000


def rule_list(names: Iterable[str]) -> str:
    """The ``Item.rule`` value of a set of rules: comma-separated, in the order of RULES (unknown names last)."""
    names = set(names)
    return ",".join([r for r in RULES if r in names] + sorted(names - set(RULES)))


def apply_filter(
    campaign: Campaign, rules=None, *, threshold: float = 1.5, type_options: TypeOptions = TypeOptions()
) -> FilterReport:
    """Label N (origin rule, with the rule(s) that fired) every item the rules rule out that is still untouched
    (pending, no hand-out, no judgment); an item that is already an automatic negative gets the newly fired
    rules added to its list (``extended``); items already in human hands are counted in ``kept``."""
    report = filter_preview(campaign.pool, rules, threshold=threshold, type_options=type_options)
    by_rules: dict[str, list[int]] = defaultdict(list)
    for entry_pk, names in report.fired.items():
        by_rules[rule_list(names)].append(entry_pk)
    applied = extended = 0
    with transaction.atomic():
        for rule, entry_pks in by_rules.items():
            for start in range(0, len(entry_pks), BATCH):
                chunk = entry_pks[start:start + BATCH]
                applied += _label_by_rule(Item.objects.filter(
                    campaign=campaign, entry_id__in=chunk, is_gold=False,
                    status=Item.Status.PENDING, num_active=0, num_judgments=0,
                ), rule)
                extended += _extend_rules(campaign, chunk, rule.split(","))
    fired = list(report.fired)
    kept = 0
    for start in range(0, len(fired), BATCH):
        kept += (
            Item.objects.filter(campaign=campaign, entry_id__in=fired[start:start + BATCH])
            .exclude(status=Item.Status.AUTO_NEGATIVE)
            .count()
        )
    report.applied, report.kept, report.extended = applied, kept, extended
    return report


def _extend_rules(campaign: Campaign, entry_pks: list[int], fired: list[str]) -> int:
    """Automatic negatives among ``entry_pks`` whose rule list lacks some of ``fired``: add them."""
    items = Item.objects.filter(campaign=campaign, entry_id__in=entry_pks, status=Item.Status.AUTO_NEGATIVE,
                                label_origin=Item.Origin.RULE)
    changed = 0
    for current in set(items.values_list("rule", flat=True)):
        wanted = rule_list(set(filter(None, current.split(","))) | set(fired))
        if wanted != current:
            changed += _set_rules(items.filter(rule=current), wanted)
    return changed


@dataclass(frozen=True)
class RevertReport:
    sent_back: int  # items back in the judging queue
    still_covered: int  # items that lost the reverted rule(s) but stay negative by another applied rule


def revert_auto_labels(
    campaign: Campaign, *, item_ids: list[int] | None = None, rules: Iterable[str] | None = None
) -> RevertReport:
    """Take rules off the automatic negatives (all rules, or ``rules``; all items, or ``item_ids``). An item
    that no applied rule covers any more goes back to human judging; one that another applied rule still
    covers stays N with the shorter rule list. ``item_ids`` without ``rules`` sends those items back."""
    items = Item.objects.filter(campaign=campaign, status=Item.Status.AUTO_NEGATIVE)
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    reverted = set(parse_rules(rules)) if rules is not None else None
    sent_back = still_covered = 0
    with transaction.atomic():
        for current in sorted(set(items.values_list("rule", flat=True))):
            applied = set(filter(None, current.split(",")))
            same = items.filter(rule=current)
            if reverted is None or (applied and applied <= reverted):
                sent_back += _send_back(same)
            elif applied & reverted:
                still_covered += _set_rules(same, rule_list(applied - reverted))
    return RevertReport(sent_back, still_covered)


# --- the writes of an item's label state (one place, for the item-state service to take over) -------------

def _label_by_rule(items: QuerySet, rule: str) -> int:
    return items.update(status=Item.Status.AUTO_NEGATIVE, label=Label.NO, label_origin=Item.Origin.RULE, rule=rule)


def _set_rules(items: QuerySet, rule: str) -> int:
    return items.update(rule=rule)


def _send_back(items: QuerySet) -> int:
    return items.update(status=Item.Status.PENDING, label="", label_origin="", rule="")
