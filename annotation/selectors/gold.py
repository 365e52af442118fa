"""Reads: annotators' accuracy on gold checks (issue 8), with Wilson 95% intervals and the admin warning list."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth import get_user_model

from annotation.lib.agreement import Interval, wilson_interval
from annotation.models import Campaign, Judgment, Label
from annotation.selectors.item_counts import ItemCounts, item_counts


@dataclass(frozen=True)
class GoldAccuracy:
    user_id: int
    username: str
    correct: int
    total: int
    accuracy: Interval  # estimate with a Wilson 95% interval (nan when no gold check answered)
    missed_yes: int  # gold Y answered N (or can't tell: not a pass)
    missed_no: int  # gold N answered Y (or can't tell)

    def below(self, threshold: float) -> bool:
        return self.total > 0 and self.accuracy.estimate < threshold


def gold_accuracy_by_annotator(campaign: Campaign) -> list[GoldAccuracy]:
    """Every annotator who answered gold checks, by username."""
    tally: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for user_id, answer, gold in Judgment.objects.filter(item__campaign=campaign, item__is_gold=True).values_list(
        "user_id", "answer", "item__gold_answer"
    ):
        row = tally[user_id]
        row[0] += answer == gold
        row[1] += 1
        row[2] += gold == Label.YES and answer != gold
        row[3] += gold == Label.NO and answer != gold
    names = dict(get_user_model().objects.filter(pk__in=list(tally)).values_list("pk", "username"))
    rows = [
        GoldAccuracy(user, names.get(user, str(user)), right, total, wilson_interval(right, total), my, mn)
        for user, (right, total, my, mn) in tally.items()
    ]
    return sorted(rows, key=lambda r: r.username)


def gold_warnings(campaign: Campaign, threshold: float | None = None,
                  accuracy: list[GoldAccuracy] | None = None) -> list[GoldAccuracy]:
    """Annotators whose gold accuracy is under ``threshold`` (default: the campaign's ``gold_threshold``),
    lowest first. Check ``accuracy.high < threshold`` to tell a clear case from a small-sample one.
    ``accuracy``: ``gold_accuracy_by_annotator(campaign)`` when the caller has it."""
    threshold = campaign.gold_threshold if threshold is None else threshold
    accuracy = gold_accuracy_by_annotator(campaign) if accuracy is None else accuracy
    rows = [row for row in accuracy if row.below(threshold)]
    return sorted(rows, key=lambda r: (r.accuracy.estimate, r.username))


@dataclass(frozen=True)
class GoldSummary:
    items: int
    yes: int
    no: int
    judgments: int


def gold_summary(campaign: Campaign, counts: ItemCounts | None = None) -> GoldSummary:
    """``counts``: the campaign's ``item_counts`` when the caller has them (else one grouped query)."""
    counts = counts if counts is not None else item_counts(campaign)
    return GoldSummary(
        counts.gold, counts.gold_yes, counts.gold_no,
        Judgment.objects.filter(item__campaign=campaign, item__is_gold=True).count(),
    )
