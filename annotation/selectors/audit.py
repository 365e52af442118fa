"""Reads: the expert audit report: agreement between the expert's blind labels and the final labels as they
were when the sample was drawn (percent agreement, Cohen's kappa), overall, per stratum and per origin; and
what making the expert labels final would change (``audit_decisions``)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from annotation.lib.agreement import cohen_kappa, percent_agreement
from annotation.models import AuditItem, Campaign, ExpertReview, Label
from annotation.selectors.labels import FINAL_STATUSES


@dataclass(frozen=True)
class AuditRow:
    group: str
    items: int  # sample items the expert(s) labelled
    agree: int
    percent: float
    kappa: float


@dataclass
class AuditReport:
    sample: int  # items in the sample
    answered: int  # (item, expert) answers
    overall: AuditRow | None
    by_final_label: list[AuditRow] = field(default_factory=list)
    by_origin: list[AuditRow] = field(default_factory=list)
    by_expert: list[AuditRow] = field(default_factory=list)
    disagreements: list[tuple[int, str, str, str]] = field(default_factory=list)  # (item, final, expert, origin)


def _row(group: str, pairs: list[tuple[str, str]]) -> AuditRow:
    return AuditRow(group, len(pairs), sum(a == b for a, b in pairs), percent_agreement(pairs), cohen_kappa(pairs))


def audit_report(campaign: Campaign) -> AuditReport:
    """Pairs are (final label as drawn, expert label), one per (item, expert) answer."""
    sample = {a.item_id: a for a in AuditItem.objects.filter(campaign=campaign)}
    rows = list(
        ExpertReview.objects.filter(item_id__in=list(sample)).exclude(label="")
        .order_by("item_id", "expert_id").values_list("item_id", "expert__username", "label")
    )
    pairs = [(sample[item].final_label, label) for item, _e, label in rows]
    report = AuditReport(len(sample), len(rows), _row("all", pairs) if pairs else None)
    groups: dict[str, dict[str, list]] = {"label": defaultdict(list), "origin": defaultdict(list), "expert": defaultdict(list)}
    for (item, expert, label), pair in zip(rows, pairs):
        audit = sample[item]
        groups["label"][audit.final_label].append(pair)
        groups["origin"][audit.final_origin].append(pair)
        groups["expert"][expert].append(pair)
        if pair[0] != pair[1]:
            report.disagreements.append((item, audit.final_label, label, audit.final_origin))
    report.by_final_label = [_row(k, v) for k, v in sorted(groups["label"].items(), reverse=True)]
    report.by_origin = [_row(k, v) for k, v in sorted(groups["origin"].items())]
    report.by_expert = [_row(k, v) for k, v in sorted(groups["expert"].items())]
    return report


# ---------------------------------------------------------------------------------------------------------
# Making the expert labels final (services.audit.apply_expert_labels)

@dataclass(frozen=True)
class AuditDecision:
    """What the experts decided on one sample item, against its label now.

    The expert majority decides; when the experts split evenly (``decision`` None) the current label stays.
    """

    item_id: int
    yes: int  # experts who answered Y
    no: int
    current: str  # the item's final label now ("" when it has none: sent back to judging since the draw)

    @property
    def decision(self) -> str | None:
        if self.yes == self.no:
            return None
        return Label.YES.value if self.yes > self.no else Label.NO.value

    @property
    def outcome(self) -> str:
        """change: the majority overturns the current label; confirm: it agrees; tie: experts split evenly;
        not_final: the item has no final label now (left alone)."""
        if not self.current:
            return "not_final"
        if self.decision is None:
            return "tie"
        return "confirm" if self.decision == self.current else "change"


def audit_decisions(campaign: Campaign) -> list[AuditDecision]:
    """One decision per sample item at least one expert answered, in sample order."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for item_id, label in ExpertReview.objects.filter(item__audit__campaign=campaign).exclude(label="").values_list(
        "item_id", "label"
    ):
        counts[item_id][0 if label == Label.YES else 1] += 1
    rows = AuditItem.objects.filter(campaign=campaign, item_id__in=list(counts)).order_by("position").values_list(
        "item_id", "item__status", "item__label"
    )
    return [
        AuditDecision(item_id, *counts[item_id], label if status in FINAL_STATUSES and label else "")
        for item_id, status, label in rows
    ]
