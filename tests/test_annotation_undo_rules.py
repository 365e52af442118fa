"""annotation/lib/undo.py without Django (issue 19): which reason refuses an undo when several hold (every
combination of the facts against the order of the checks), the limit of recent answers, and what the annotator
is told (whole messages: every "someone else acted" case reads the same, blind judging)."""
from __future__ import annotations

import itertools
from dataclasses import FrozenInstanceError, fields

import pytest

from annotation.lib import undo as lib
from annotation.lib.undo import MESSAGES, UndoFacts, undo_refusal

OTHERS = "someone else has worked on this item since your answer"


def test_the_limit_and_the_messages():
    assert lib.RECENT_ANSWERS == 20  # "My recent answers" lists 20 (issue 15)
    assert lib.OTHERS_ACTED == OTHERS
    assert MESSAGES == {
        "adjudicated": OTHERS, "adjudicating": OTHERS, "audit": OTHERS, "reused": OTHERS, "answered_after": OTHERS,
        "not_recent": "only your last 20 answers can be undone; an admin can correct older ones",
    }


# the checks in the order the service reports them: the first that holds names the refusal
ORDER = (("adjudicated", lambda f: f.adjudicated), ("adjudicating", lambda f: f.adjudication_open),
         ("audit", lambda f: f.expert_reviewed), ("reused", lambda f: f.reused_elsewhere),
         ("answered_after", lambda f: f.later_answers_by_others > 0), ("not_recent", lambda f: not f.recent))


@pytest.mark.parametrize("later", [0, 1, 2, 7])
def test_every_combination_of_facts_names_the_first_reason_that_holds(later):
    for recent, adjudicated, adjudication_open, expert_reviewed, reused in itertools.product((False, True), repeat=5):
        facts = UndoFacts(recent=recent, later_answers_by_others=later, adjudicated=adjudicated,
                          adjudication_open=adjudication_open, expert_reviewed=expert_reviewed,
                          reused_elsewhere=reused)
        expected = next((code for code, holds in ORDER if holds(facts)), None)
        assert undo_refusal(facts) == expected, facts
        assert expected is None or expected in MESSAGES


def test_only_a_recent_answer_nobody_else_touched_may_be_undone():
    free = UndoFacts(True, 0, False, False, False, False)
    assert undo_refusal(free) is None
    assert [field.name for field in fields(UndoFacts)] == [
        "recent", "later_answers_by_others", "adjudicated", "adjudication_open", "expert_reviewed", "reused_elsewhere"]
    with pytest.raises(FrozenInstanceError):
        free.recent = False
