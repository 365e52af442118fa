"""Reads: inter-annotator agreement of a campaign (issue 4 / 8). Only human double judgments count: items
labelled by a rule, imported or reused have no judgments and are left out by construction; gold checks are
left out too (they are scored against their answer, see :func:`gold_accuracy`)."""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from annotation.lib.agreement import Interval, wilson_interval, yes_no_statistics
from annotation.lib.evidence import NO_SOURCE_GROUP
from annotation.models import Campaign, Item, Judgment
from annotation.selectors.filtering import kg_categories

GROUPINGS = ("overall", "pair", "relation", "category", "depth", "domain")


@dataclass(frozen=True)
class AgreementRow:
    group: str
    items: int  # items with two judgments
    percent: float  # a pair with a can't-tell answer counts as a disagreement
    kappa: float  # Y/N pairs only
    ac1: float  # Y/N pairs only
    alpha: float  # Krippendorff's alpha over every judgment of the group's items (any number of raters; can't
    # tell as a missing value)
    cant_tell: int = 0  # pairs with a can't-tell answer (annotation.lib.agreement.yes_no_statistics)


def _judgments(campaign: Campaign):
    rows = Judgment.objects.filter(item__campaign=campaign, item__is_gold=False).order_by("item_id", "given_at", "pk")
    by_item: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for item_id, user_id, answer, domain in rows.values_list("item_id", "user_id", "answer", "source_domain"):
        by_item[item_id].append((user_id, answer, domain or NO_SOURCE_GROUP))
    return by_item


def agreement(campaign: Campaign, by: str = "overall") -> list[AgreementRow]:
    """Agreement statistics, overall or per annotator pair / relation / relation category / pool depth /
    source domain (of the first judgment). In a pair, rater 1 is the user with the smaller id."""
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; one of {', '.join(GROUPINGS)}")
    by_item = _judgments(campaign)
    info = {
        pk: (rel_key, rel_index, depth)
        for pk, rel_key, rel_index, depth in Item.objects.filter(pk__in=list(by_item)).values_list(
            "pk", "relation__key", "relation__index", "entry__depth"
        )
    }
    categories = kg_categories(campaign.pool.sample.kg) if by == "category" else None
    groups: dict[str, list[list[tuple[int, str, str]]]] = defaultdict(list)
    for item_id, judgments in by_item.items():
        rel_key, rel_index, depth = info[item_id]
        if by == "overall":
            key = "all"
        elif by == "pair":
            if len(judgments) < 2:
                continue
            key = "-".join(str(u) for u in sorted(j[0] for j in judgments[:2]))
        elif by == "relation":
            key = rel_key
        elif by == "category":
            key = str(categories[rel_index])
        elif by == "depth":
            key = "unknown" if depth is None else str(depth)
        else:
            key = judgments[0][2]
        groups[key].append(judgments)
    rows = []
    for key in sorted(groups):
        units = groups[key]
        pairs = [
            tuple(answer for _u, answer, _d in sorted(j[:2], key=lambda x: x[0])) if by == "pair" else (j[0][1], j[1][1])
            for j in units if len(j) >= 2
        ]
        stats = yes_no_statistics(pairs, [[answer for _u, answer, _d in j] for j in units])
        rows.append(AgreementRow(key, stats.items, stats.percent, stats.kappa, stats.ac1, stats.alpha, stats.cant_tell))
    return rows


def gold_accuracy(campaign: Campaign) -> dict[int, Interval]:
    """user id -> accuracy on gold checks with a Wilson 95% interval (a can't tell on a gold check is not a pass:
    the check asked for the known answer)."""
    tally: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for user_id, answer, gold in Judgment.objects.filter(item__campaign=campaign, item__is_gold=True).values_list(
        "user_id", "answer", "item__gold_answer"
    ):
        tally[user_id][0] += answer == gold
        tally[user_id][1] += 1
    return {user: wilson_interval(right, total) for user, (right, total) in sorted(tally.items())}


def rushed_judgments(campaign: Campaign) -> list[int]:
    """Ids of judgments faster than ``rushed_factor`` x the campaign's median time on task."""
    times = sorted(
        t for t in Judgment.objects.filter(item__campaign=campaign).exclude(time_on_task_ms=None)
        .values_list("time_on_task_ms", flat=True)
    )
    if not times:
        return []
    mid = len(times) // 2
    median = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
    limit = campaign.rushed_factor * median
    return list(
        Judgment.objects.filter(item__campaign=campaign, time_on_task_ms__lt=limit).order_by("pk").values_list("pk", flat=True)
    )


def is_defined(value: float) -> bool:
    return not math.isnan(value)
