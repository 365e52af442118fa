"""Reads: inter-annotator agreement of a campaign (issue 4 / 8). One population and one set of rules for every
page, command and export that reports it (the agreement page, the quality page's intervals, the datasheet):

- the items people judged twice in this campaign: gold checks, rule, imported and reused labels left out (they
  have no judgments of this campaign's people, or are scored against their answer, see :func:`gold_accuracy`);
- rater 1 is the first judgment given (in the per-pair grouping, the annotator with the smaller id);
- "can't tell" answers as ``annotation.lib.agreement.yes_no_statistics`` reads them: a disagreement in the
  percent agreement, left out of kappa and AC1, a missing value for alpha, counted beside.

The groupings (:data:`GROUPINGS`) put an item in one group, except ``system`` (each system that pooled it) and
``domain`` (each distinct source domain its two judgments cite)."""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from annotation.lib.agreement import Interval, wilson_interval, yes_no_statistics
from annotation.lib.evidence import NO_SOURCE_GROUP
from annotation.models import Campaign, Item, Judgment
from annotation.selectors.filtering import kg_categories
from pooling.models import PoolHit

GROUPINGS = ("overall", "pair", "relation", "category", "depth", "system", "domain")
# Items whose label people gave in this campaign (rule, imported and reused labels have no judgments here).
HUMAN_STATUSES = (Item.Status.IN_PROGRESS, Item.Status.AGREED, Item.Status.CONFLICT, Item.Status.ADJUDICATED)
CHUNK = 5000


@dataclass(frozen=True)
class Rating:
    user_id: int
    answer: str  # Y, N or C (can't tell)
    domain: str  # the source's domain, or NO_SOURCE_GROUP


#: item pk -> (rater 1's rating, rater 2's rating)
Pairs = dict[int, tuple[Rating, Rating]]


@dataclass(frozen=True)
class AgreementRow:
    group: str
    items: int  # items with two judgments, can't tell included
    percent: float  # a pair with a can't-tell answer counts as a disagreement
    kappa: float  # Y/N pairs only
    ac1: float  # Y/N pairs only
    alpha: float  # Krippendorff's alpha, can't tell as a missing value
    cant_tell: int = 0  # pairs with a can't-tell answer (annotation.lib.agreement.yes_no_statistics)


def judgment_pairs(campaign: Campaign) -> Pairs:
    """The first two judgments of every item people judged twice (module docstring), in the order given."""
    by_item: dict[int, list[Rating]] = defaultdict(list)
    rows = (
        Judgment.objects.filter(item__campaign=campaign, item__is_gold=False, item__status__in=HUMAN_STATUSES)
        .exclude(item__label_origin__in=(Item.Origin.RULE, Item.Origin.IMPORTED, Item.Origin.REUSED))
        .order_by("item_id", "given_at", "pk")
        .values_list("item_id", "user_id", "answer", "source_domain")
    )
    for item_id, user_id, answer, domain in rows.iterator(chunk_size=CHUNK):
        by_item[item_id].append(Rating(user_id, answer, domain or NO_SOURCE_GROUP))
    return {pk: (ratings[0], ratings[1]) for pk, ratings in by_item.items() if len(ratings) >= 2}


def group_keys(campaign: Campaign, by: str, pairs: Pairs) -> dict[int, list[str]]:
    """item pk -> the groups of ``by`` it counts in."""
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; one of {', '.join(GROUPINGS)}")
    if by == "overall":
        return {pk: ["all"] for pk in pairs}
    if by == "pair":
        return {pk: ["-".join(str(u) for u in sorted((a.user_id, b.user_id)))] for pk, (a, b) in pairs.items()}
    if by == "domain":
        return {pk: sorted({a.domain, b.domain}) for pk, (a, b) in pairs.items()}
    info = {}
    items = list(pairs)
    for start in range(0, len(items), CHUNK):
        info.update({
            pk: (rel_key, rel_index, depth, entry_id)
            for pk, rel_key, rel_index, depth, entry_id in Item.objects.filter(pk__in=items[start:start + CHUNK])
            .values_list("pk", "relation__key", "relation__index", "entry__depth", "entry_id")
        })
    if by == "relation":
        return {pk: [info[pk][0]] for pk in pairs}
    if by == "category":
        categories = kg_categories(campaign.pool.sample.kg)
        return {pk: [str(categories[info[pk][1]])] for pk in pairs}
    if by == "depth":
        return {pk: ["unknown" if info[pk][2] is None else str(info[pk][2])] for pk in pairs}
    systems: dict[int, set[str]] = defaultdict(set)
    # the hits of the paired items' entries only, not of the whole pool (76,583 entries at 5 M triples)
    entries = sorted({info[pk][3] for pk in pairs if info[pk][3] is not None})
    for start in range(0, len(entries), CHUNK):
        hits = PoolHit.objects.filter(entry_id__in=entries[start:start + CHUNK])
        for entry_id, name in hits.values_list("entry_id", "system__name"):
            systems[entry_id].add(name or "unknown")
    return {pk: sorted(systems.get(info[pk][3]) or {"unknown"}) for pk in pairs}


def rater_order(by: str, pair: tuple[Rating, Rating]) -> tuple[Rating, Rating]:
    """Rater 1 first: the first judgment given, or in the per-pair grouping the annotator with the smaller id
    (so that each annotator's marginals stay theirs in Cohen's kappa)."""
    first, second = pair
    if by == "pair" and second.user_id < first.user_id:
        return second, first
    return pair


def group_order(key: str):
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def grouped_answer_pairs(campaign: Campaign, by: str, pairs: Pairs | None = None) -> dict[str, list[tuple[str, str]]]:
    """group -> the (rater 1, rater 2) answers of its items, groups in display order (numbers first)."""
    pairs = judgment_pairs(campaign) if pairs is None else pairs
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pk, keys in group_keys(campaign, by, pairs).items():
        first, second = rater_order(by, pairs[pk])
        for key in keys:
            groups[key].append((first.answer, second.answer))
    return {key: groups[key] for key in sorted(groups, key=group_order)}


def agreement(campaign: Campaign, by: str = "overall", *, pairs: Pairs | None = None) -> list[AgreementRow]:
    """Agreement statistics, overall or per :data:`GROUPINGS` (module docstring). ``pairs``:
    ``judgment_pairs(campaign)`` when the caller already read them (a page showing every grouping)."""
    rows = []
    for key, answers in grouped_answer_pairs(campaign, by, pairs).items():
        stats = yes_no_statistics(answers)
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
