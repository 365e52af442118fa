"""Evidence policy of a campaign: for which answers an annotator must give a source URL (Django-free)."""
from __future__ import annotations

# policy -> the answers ("Y", "N") that need a source
EVIDENCE_POLICIES: dict[str, frozenset[str]] = {
    "yes": frozenset({"Y"}),
    "no": frozenset({"N"}),
    "both": frozenset({"Y", "N"}),
    "never": frozenset(),
}
NO_SOURCE_GROUP = "(no source)"  # the "domain" of an answer given without a source, in agreement by domain
DEFAULT_EVIDENCE_POLICY = "yes"  # a "yes" adds a fact to the KG: it needs a source; an obvious "no" should not
EVIDENCE_CHOICES = [
    ("yes", "A source is required for Yes"),
    ("no", "A source is required for No"),
    ("both", "A source is required for every answer"),
    ("never", "A source is optional"),
]


def source_required(policy: str, answer: str) -> bool:
    """Whether an ``answer`` ("Y" or "N") needs a source URL under ``policy``."""
    try:
        return answer in EVIDENCE_POLICIES[policy]
    except KeyError:
        raise ValueError(f"unknown evidence policy {policy!r}; policies: {', '.join(EVIDENCE_POLICIES)}") from None


def describe(policy: str) -> str:
    """Plain words for the judge page, e.g. "required for Yes, optional for No"."""
    needed = EVIDENCE_POLICIES[policy]
    if needed == {"Y", "N"}:
        return "required"
    if not needed:
        return "optional"
    return "required for Yes, optional for No" if "Y" in needed else "required for No, optional for Yes"
