"""Reads: stored judgments whose source URL holds a second scheme (a URL pasted after a prefilled one)."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.lib.sources import has_doubled_scheme, undouble
from annotation.models import Campaign, Judgment


@dataclass(frozen=True)
class DoubledSource:
    judgment: Judgment
    repaired_url: str | None  # what it was meant to be; None: no literal inner URL to keep

    def describe(self) -> str:
        j = self.judgment
        fix = self.repaired_url or "(no inner URL to keep: fix by hand)"
        return f"{j.item.campaign.name} item {j.item_id} judgment {j.pk} by {j.user}: {j.source_url} -> {fix}"


def doubled_sources(campaigns: list[Campaign] | None = None) -> list[DoubledSource]:
    """Judgments (of ``campaigns``, default all) whose source URL has a doubled scheme, oldest first."""
    rows = Judgment.objects.filter(source_url__iregex=r".https?(:|%3a)").select_related("item__campaign", "user")
    if campaigns is not None:
        rows = rows.filter(item__campaign__in=campaigns)
    return [DoubledSource(j, undouble(j.source_url)) for j in rows.order_by("pk") if has_doubled_scheme(j.source_url)]
