"""annotation/lib/item_state.py without Django (issue 19): its constants read from annotation/models.py's source
(no app registry needed), the boundaries of each rule on hand-made cases, and every small case against a
reference written from the module's rule list (numbered as there)."""
from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from annotation.lib import item_state as lib
from annotation.lib.item_state import ItemFacts, ItemState, derive_item_state

MODELS = Path(__file__).resolve().parent.parent / "annotation" / "models.py"


def choices(*path: str) -> dict[str, str]:
    """NAME -> stored value of a TextChoices class of annotation/models.py (e.g. "Item", "Status"), from its source."""
    body = ast.parse(MODELS.read_text(encoding="utf-8")).body
    for name in path:
        body = next(node.body for node in body if isinstance(node, ast.ClassDef) and node.name == name)
    values = {}
    for node in body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            values[node.targets[0].id] = ast.literal_eval(node.value.elts[0])
    return values


def test_constants_are_the_stored_values_of_the_models_choices():
    status, origin = choices("Item", "Status"), choices("Item", "Origin")
    assert (lib.PENDING, lib.IN_PROGRESS, lib.AGREED, lib.CONFLICT) == \
        (status["PENDING"], status["IN_PROGRESS"], status["AGREED"], status["CONFLICT"])
    assert (lib.ADJUDICATED, lib.AUTO_NEGATIVE, lib.IMPORTED) == \
        (status["ADJUDICATED"], status["AUTO_NEGATIVE"], status["IMPORTED"])
    assert lib.FINAL_STATUSES == (status["AUTO_NEGATIVE"], status["AGREED"], status["ADJUDICATED"], status["IMPORTED"])
    assert (lib.UNANIMOUS, lib.RULE, lib.EXPERT, lib.AUDIT) == \
        (origin["UNANIMOUS"], origin["RULE"], origin["EXPERT"], origin["AUDIT"])
    assert origin["ADJUDICATED"] == status["ADJUDICATED"]  # the code uses one constant for both
    assert lib.NO == choices("Label")["NO"]
    assert lib.CANT_TELL == choices("Answer")["CANT_TELL"]


def facts(answers=(), open_handouts=0, *, adjudication=None, flagged=False, gold=False, per_item=2,
          status="pending", label="", origin="") -> ItemFacts:
    return ItemFacts(gold, per_item, tuple(answers), open_handouts, adjudication, flagged, status, label, origin)


@pytest.mark.parametrize("given_facts, expected", [
    # rule 4 with judgments_per_item 0 or 1: one answer decides (never "0 judgments decide")
    (facts(["Y"], per_item=1), ItemState("agreed", "Y", "unanimous", 1, 1)),
    (facts(["N"], per_item=0), ItemState("agreed", "N", "unanimous", 1, 1)),
    (facts(per_item=0), ItemState("pending", "", "", 0, 0)),
    (facts(open_handouts=1, per_item=0), ItemState("in_progress", "", "", 0, 1)),
    # more judgments than needed still decide
    (facts(["Y", "Y", "Y"], per_item=2), ItemState("agreed", "Y", "unanimous", 3, 3)),
    (facts(["Y", "Y", "N"], per_item=2), ItemState("conflict", "", "", 3, 3)),
    # a can't-tell answer is one of the judgments, and sends the item to adjudication
    (facts(["C"], per_item=1), ItemState("conflict", "", "", 1, 1)),
    (facts(["C", "C"]), ItemState("conflict", "", "", 2, 2)),
    (facts(["Y", "C"]), ItemState("conflict", "", "", 2, 2)),
    (facts(["C"], 1), ItemState("in_progress", "", "", 1, 2)),
    # a flag routes even a single deciding answer to adjudication
    (facts(["N"], per_item=1, flagged=True), ItemState("conflict", "", "", 1, 1)),
    # rule 1: a gold check with a hand-out only, or with enough equal answers, is in progress (never decided)
    (facts(open_handouts=1, gold=True), ItemState("in_progress", "", "", 0, 1)),
    (facts(["Y", "Y"], gold=True, status="adjudicated", label="Y", origin="audit"),
     ItemState("in_progress", "", "", 2, 2)),
    (facts(gold=True, status="imported", label="Y", origin="imported"), ItemState("pending", "", "", 0, 0)),
    (facts(gold=True, status="auto_negative", label="N", origin="rule"), ItemState("pending", "", "", 0, 0)),
    # rule 2 holds only while untouched and not adjudicated
    (facts(open_handouts=1, status="auto_negative", label="N", origin="rule"), ItemState("in_progress", "", "", 0, 1)),
    (facts(["Y"], status="auto_negative", label="N", origin="rule"), ItemState("in_progress", "", "", 1, 1)),
    (facts(adjudication="Y", status="auto_negative", label="N", origin="rule"),
     ItemState("adjudicated", "Y", "adjudicated", 0, 0)),
    (facts(adjudication="N", status="imported", label="Y", origin="reused"),
     ItemState("adjudicated", "N", "adjudicated", 0, 0)),
    (facts(open_handouts=2, status="imported", label="Y", origin="reused"), ItemState("in_progress", "", "", 0, 2)),
    # the rule label is N whatever was stored; an imported item keeps its stored label and origin, even empty
    (facts(status="auto_negative", label="", origin=""), ItemState("auto_negative", "N", "rule", 0, 0)),
    (facts(status="imported", label="", origin="imported"), ItemState("imported", "", "imported", 0, 0)),
    # rule 6: an expert label needs a final status and a label
    (facts(["Y", "Y"], status="agreed", label="", origin="expert"), ItemState("agreed", "Y", "unanimous", 2, 2)),
    (facts(["Y"], 1, status="agreed", label="N", origin="expert"), ItemState("in_progress", "", "", 1, 2)),
    (facts(status="pending", label="N", origin="expert"), ItemState("pending", "", "", 0, 0)),
    (facts(["Y", "N"], adjudication="Y", status="adjudicated", label="N", origin="expert"),
     ItemState("adjudicated", "N", "expert", 2, 2)),
    (facts(status="imported", label="N", origin="expert"), ItemState("imported", "N", "expert", 0, 0)),
    # rule 7: an audit label decides a decided or untouched item, needs a label, lapses on a reopened one
    (facts(status="pending", label="Y", origin="audit"), ItemState("adjudicated", "Y", "audit", 0, 0)),
    (facts(status="adjudicated", label="", origin="audit"), ItemState("pending", "", "", 0, 0)),
    (facts(["Y", "Y"], status="adjudicated", label="", origin="audit"), ItemState("agreed", "Y", "unanimous", 2, 2)),
    (facts(open_handouts=1, status="adjudicated", label="Y", origin="audit"), ItemState("in_progress", "", "", 0, 1)),
    (facts(["N"], 1, status="adjudicated", label="Y", origin="audit"), ItemState("in_progress", "", "", 1, 2)),
    (facts(status="auto_negative", label="Y", origin="audit"), ItemState("adjudicated", "Y", "audit", 0, 0)),
    (facts(["Y", "N"], adjudication="N", status="adjudicated", label="Y", origin="audit"),
     ItemState("adjudicated", "Y", "audit", 2, 2)),
    # another stored origin never overrides the derived label
    (facts(["Y", "Y"], status="agreed", label="N", origin="adjudicated"), ItemState("agreed", "Y", "unanimous", 2, 2)),
])
def test_rule_boundaries_on_hand_made_cases(given_facts, expected):
    assert derive_item_state(given_facts) == expected


def test_facts_and_state_are_frozen_and_compare_by_value():
    state = derive_item_state(facts(["Y", "Y"]))
    assert state == ItemState("agreed", "Y", "unanimous", 2, 2)
    with pytest.raises(AttributeError):
        state.status = "conflict"
    with pytest.raises(AttributeError):
        facts().flagged = True


def reference(f: ItemFacts) -> ItemState:
    """The module's rules 1-7, written out one by one from its doc."""
    judged, active = len(f.answers), len(f.answers) + f.open_handouts
    waiting = ("pending" if active == 0 else "in_progress", "", "")
    if f.is_gold:  # 1
        status, label, origin = waiting
    elif active == 0 and f.adjudication is None and f.stored_status in ("auto_negative", "imported"):  # 2
        if f.stored_status == "auto_negative":
            status, label, origin = "auto_negative", "N", "rule"
        else:
            status, label, origin = "imported", f.stored_label, f.stored_origin
    elif f.adjudication is not None:  # 3
        status, label, origin = "adjudicated", f.adjudication, "adjudicated"
    elif judged >= f.judgments_per_item and judged >= 1:  # 4
        unanimous = all(answer == f.answers[0] for answer in f.answers)
        if unanimous and "C" not in f.answers and not f.flagged:
            status, label, origin = "agreed", f.answers[0], "unanimous"
        else:
            status, label, origin = "conflict", "", ""
    else:  # 5
        status, label, origin = waiting
    final = status in ("auto_negative", "agreed", "adjudicated", "imported")
    # 6 and 7 apply to everything but gold checks and items that were imported (these keep their stored origin)
    if not f.is_gold and not (status == "imported"):
        if f.stored_origin == "audit" and f.stored_label != "" and (final or active == 0):  # 7
            status, label, origin = "adjudicated", f.stored_label, "audit"
        elif f.stored_origin == "expert" and f.stored_label != "" and final:  # 6
            label, origin = f.stored_label, "expert"
    return ItemState(status, label, origin, judged, active)


def test_every_small_case_follows_the_rules():
    checked = 0
    for gold, per_item, handouts, adjudication, flagged in itertools.product(
            (False, True), (0, 1, 2), (0, 1), (None, "Y", "N"), (False, True)):
        for count in range(3):
            for answers in itertools.product("YNC", repeat=count):
                for stored_status, stored_label, stored_origin in itertools.product(
                        ("pending", "agreed", "auto_negative", "imported"), ("", "Y", "N"),
                        ("", "expert", "audit", "reused")):
                    f = ItemFacts(gold, per_item, answers, handouts, adjudication, flagged, stored_status,
                                  stored_label, stored_origin)
                    assert derive_item_state(f) == reference(f), f
                    checked += 1
    assert checked == 2 * 3 * 2 * 3 * 2 * (1 + 3 + 9) * 4 * 3 * 4
