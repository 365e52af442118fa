"""Writes: repair of doubled source URLs (issue 15) as admin edits, so the stored value stays in the history."""
from __future__ import annotations

from dataclasses import dataclass

from annotation.selectors.sources import DoubledSource
from annotation.services.errors import InvalidSource
from annotation.services.label_edits import edit_judgment

REPAIR_NOTE = "doubled source URL repaired (a URL pasted after the prefilled one): kept the pasted URL"


@dataclass(frozen=True)
class RepairOutcome:
    repaired: list[DoubledSource]
    left: list[tuple[DoubledSource, str]]  # with why it was not repaired


def repair_doubled_sources(found: list[DoubledSource], *, by=None) -> RepairOutcome:
    """Replace each doubled source by its inner URL through ``edit_judgment`` (a new ``admin_edit`` version with
    the old URL, never an overwrite). ``by``: the admin responsible (None: recorded as made by a program).
    A URL without a literal inner URL, or whose inner URL is not on the campaign's verified domains, is left."""
    repaired, left = [], []
    for doubled in found:
        if doubled.repaired_url is None:
            left.append((doubled, "no literal inner URL"))
            continue
        try:
            edit_judgment(doubled.judgment, by=by, note=REPAIR_NOTE, source_url=doubled.repaired_url)
        except InvalidSource as exc:
            left.append((doubled, str(exc)))
        else:
            repaired.append(doubled)
    return RepairOutcome(repaired, left)
