"""When an annotator may undo one of their own answers (Django-free): the one definition of "nobody else has
acted on it", read by the undo service (under the item's row lock) and the "My recent answers" page.

An answer (an active judgment) may be undone by its author while all of these hold:

1. it is among the author's last ``RECENT_ANSWERS`` active answers in the campaign (older answers are
   corrected by an admin, with a note: ``services/label_edits``);
2. no other annotator judged the item after it (gold checks too: they must look like any other item);
3. no adjudicator decided the item, and none holds it now (an open, unexpired adjudication hand-out);
4. no expert reviewed it and it is not in the expert-audit sample (the sample was drawn with its final label);
5. no item of another campaign reuses its final label (``Item.reused_from``).

An agreed item whose deciding answer is undone is no longer agreed: it goes back to ``in_progress`` (its label
was final only by that answer). Consistency flags the answer raised stay on the items (an adjudicator settles
them).

What the annotator is told keeps judging blind: every "someone else acted" case reads the same (saying that
an adjudicator holds the item would tell them the other answer differed); the code says which it was.
"""
from __future__ import annotations

from dataclasses import dataclass

RECENT_ANSWERS = 20


@dataclass(frozen=True)
class UndoFacts:
    recent: bool  # among the author's last RECENT_ANSWERS active answers in the campaign
    later_answers_by_others: int  # other people's judgments of the item given after it
    adjudicated: bool
    adjudication_open: bool  # an adjudicator holds the item (open, unexpired hand-out)
    expert_reviewed: bool  # an expert review exists or the item is in the audit sample
    reused_elsewhere: bool  # an item of another campaign reuses its final label


OTHERS_ACTED = "someone else has worked on this item since your answer"
MESSAGES = {
    "adjudicated": OTHERS_ACTED,
    "adjudicating": OTHERS_ACTED,
    "audit": OTHERS_ACTED,
    "reused": OTHERS_ACTED,
    "answered_after": OTHERS_ACTED,
    "not_recent": f"only your last {RECENT_ANSWERS} answers can be undone; an admin can correct older ones",
}


def undo_refusal(facts: UndoFacts) -> str | None:
    """Why the answer cannot be undone (a key of ``MESSAGES``), or None when it can."""
    if facts.adjudicated:
        return "adjudicated"
    if facts.adjudication_open:
        return "adjudicating"
    if facts.expert_reviewed:
        return "audit"
    if facts.reused_elsewhere:
        return "reused"
    if facts.later_answers_by_others:
        return "answered_after"
    if not facts.recent:
        return "not_recent"
    return None
