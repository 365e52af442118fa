"""Reads: the expert audit report: agreement between the expert's blind labels and the final labels as they
were when the sample was drawn (percent agreement, Cohen's kappa), overall, per stratum and per origin."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from annotation.lib.agreement import cohen_kappa, percent_agreement
from annotation.models import AuditItem, Campaign, ExpertReview


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
