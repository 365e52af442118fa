"""An item's state derived from its facts (no Django): the one definition of status, label, origin and counters.

Facts: the item's judgments, its adjudication, its open judging hand-outs, its consistency flags, and the
decisions made outside human judging that live on the item itself (a trivial-filter rule, a label imported or
reused from elsewhere, an expert label an admin made final). The rules, in order:

1. A gold check is never decided: ``pending`` until handed out or judged, then ``in_progress``.
2. An untouched item (no judgment, no open hand-out, no adjudication) labelled by a rule stays
   ``auto_negative`` (N, origin rule); one labelled elsewhere stays ``imported`` with its label and origin.
3. An adjudicated item is ``adjudicated`` with the adjudicator's label.
4. With ``judgments_per_item`` judgments or more: ``agreed`` (origin unanimous) when all answers are equal, none
   is "can't tell" and no consistency flag routed it to adjudication, else ``conflict`` (no label until
   adjudicated). A can't-tell answer counts as one of the judgments: the item waits for its other answers as
   usual (they stay independent) and then goes to adjudication, with the annotator's comment.
5. Otherwise ``pending`` (nothing given or handed out) or ``in_progress``.
6. On a final status, an expert label an admin made final (stored origin ``expert``, legacy) stays the label.
7. An expert-audit label made final (stored origin ``audit``, ``apply_audit_labels``) is the item's decision:
   ``adjudicated`` with that label while the item is decided or untouched (an auto-negative or imported item
   whose rule was cleared when the audit overruled it); it lapses when an edit reopens the item.

Counters: ``num_judgments`` = judgments; ``num_active`` = judgments + open judging hand-outs (an expired
hand-out counts until ``release_expired`` closes it).
"""
from __future__ import annotations

from dataclasses import dataclass

# Values of annotation.models.Item.Status / Item.Origin / Label (checked equal by tests/test_annotation_item_state.py).
PENDING, IN_PROGRESS, AGREED, CONFLICT = "pending", "in_progress", "agreed", "conflict"
ADJUDICATED, AUTO_NEGATIVE, IMPORTED = "adjudicated", "auto_negative", "imported"
FINAL_STATUSES = (AUTO_NEGATIVE, AGREED, ADJUDICATED, IMPORTED)
UNANIMOUS, RULE, EXPERT, AUDIT = "unanimous", "rule", "expert", "audit"
NO = "N"
CANT_TELL = "C"  # annotation.models.Answer.CANT_TELL: an annotator's answer, never a final label


@dataclass(frozen=True)
class ItemFacts:
    is_gold: bool
    judgments_per_item: int
    answers: tuple[str, ...]  # one per judgment
    open_handouts: int  # open judging hand-outs
    adjudication: str | None  # the adjudicated label, if any
    flagged: bool  # carries a consistency flag
    stored_status: str
    stored_label: str
    stored_origin: str


@dataclass(frozen=True)
class ItemState:
    status: str
    label: str
    origin: str
    num_judgments: int
    num_active: int


def derive_item_state(facts: ItemFacts) -> ItemState:
    """The state the rules above give for ``facts`` (idempotent: feeding the result back changes nothing)."""
    judged = len(facts.answers)
    active = judged + facts.open_handouts
    untouched = active == 0

    def state(status: str, label: str = "", origin: str = "") -> ItemState:
        return ItemState(status, label, origin, judged, active)

    if facts.is_gold:
        return state(PENDING if untouched else IN_PROGRESS)
    if untouched and facts.adjudication is None and facts.stored_status == IMPORTED:
        return state(IMPORTED, facts.stored_label, facts.stored_origin)
    if untouched and facts.adjudication is None and facts.stored_status == AUTO_NEGATIVE:
        base = state(AUTO_NEGATIVE, NO, RULE)
    elif facts.adjudication is not None:
        base = state(ADJUDICATED, facts.adjudication, ADJUDICATED)
    elif judged >= max(1, facts.judgments_per_item):
        agreed = len(set(facts.answers)) == 1 and facts.answers[0] != CANT_TELL and not facts.flagged
        base = state(AGREED, facts.answers[0], UNANIMOUS) if agreed else state(CONFLICT)
    else:
        base = state(PENDING if untouched else IN_PROGRESS)
    if facts.stored_origin == AUDIT and facts.stored_label and (base.status in FINAL_STATUSES or untouched):
        return state(ADJUDICATED, facts.stored_label, AUDIT)
    if facts.stored_origin == EXPERT and facts.stored_label and base.status in FINAL_STATUSES:
        return state(base.status, facts.stored_label, EXPERT)
    return base
