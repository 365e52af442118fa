"""The derived item state (issue 13): the rules of annotation/lib/item_state.py on hand-made cases, their
constants equal to the models' choices, and idempotence (a derived state fed back derives to itself)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.lib import item_state as lib
from annotation.lib.item_state import ItemFacts, ItemState, derive_item_state


def facts(answers=(), open_handouts=0, *, adjudication=None, flagged=False, gold=False, per_item=2,
          status="pending", label="", origin="") -> ItemFacts:
    return ItemFacts(gold, per_item, tuple(answers), open_handouts, adjudication, flagged, status, label, origin)


@pytest.mark.parametrize("given_facts, expected", [
    # untouched, handed out, half judged
    (facts(), ItemState("pending", "", "", 0, 0)),
    (facts(open_handouts=2), ItemState("in_progress", "", "", 0, 2)),
    (facts(["Y"], 1), ItemState("in_progress", "", "", 1, 2)),
    (facts(["Y"]), ItemState("in_progress", "", "", 1, 1)),  # the other hand-out expired: still in progress
    # decided by two judgments
    (facts(["N", "N"]), ItemState("agreed", "N", "unanimous", 2, 2)),
    (facts(["Y", "N"]), ItemState("conflict", "", "", 2, 2)),
    (facts(["Y", "Y"], flagged=True), ItemState("conflict", "", "", 2, 2)),  # a flag sends it to adjudication
    (facts(["Y", "Y", "Y"], per_item=3), ItemState("agreed", "Y", "unanimous", 3, 3)),
    (facts(["Y", "Y"], per_item=3), ItemState("in_progress", "", "", 2, 2)),
    # a stale label on a conflict is dropped (issue 8 flags used to keep it)
    (facts(["Y", "Y"], flagged=True, status="conflict", label="Y", origin="unanimous"), ItemState("conflict", "", "", 2, 2)),
    (facts(["Y", "N"], adjudication="N"), ItemState("adjudicated", "N", "adjudicated", 2, 2)),
    # an admin's edit that makes the judges agree does not undo the adjudicator's decision
    (facts(["Y", "Y"], adjudication="N"), ItemState("adjudicated", "N", "adjudicated", 2, 2)),
    # decisions stored on the item (rule, import, reuse) hold while nobody judged it
    (facts(status="auto_negative", label="N", origin="rule"), ItemState("auto_negative", "N", "rule", 0, 0)),
    (facts(status="imported", label="Y", origin="reused"), ItemState("imported", "Y", "reused", 0, 0)),
    (facts(["Y"], 1, status="imported", label="N", origin="imported"), ItemState("in_progress", "", "", 1, 2)),
    # an expert label an admin made final stays on a decided item, lapses when it is reopened
    (facts(["Y", "Y"], status="agreed", label="N", origin="expert"), ItemState("agreed", "N", "expert", 2, 2)),
    (facts(["Y", "N"], status="agreed", label="N", origin="expert"), ItemState("conflict", "", "", 2, 2)),
    (facts(status="auto_negative", label="Y", origin="expert"), ItemState("auto_negative", "Y", "expert", 0, 0)),
    # an expert-audit label made final (apply_audit_labels) decides the item, also one a rule had labelled
    (facts(["Y", "Y"], status="adjudicated", label="N", origin="audit"), ItemState("adjudicated", "N", "audit", 2, 2)),
    (facts(status="adjudicated", label="Y", origin="audit"), ItemState("adjudicated", "Y", "audit", 0, 0)),
    (facts(["Y", "N"], status="adjudicated", label="N", origin="audit"), ItemState("conflict", "", "", 2, 2)),
    # gold checks are never decided
    (facts(gold=True), ItemState("pending", "", "", 0, 0)),
    (facts(["Y", "N", "Y"], 1, gold=True, status="in_progress"), ItemState("in_progress", "", "", 3, 4)),
])
def test_rules_on_hand_made_cases(given_facts, expected):
    assert derive_item_state(given_facts) == expected


def test_constants_are_the_models_choices():
    from annotation.models import Item, Label

    assert set(lib.FINAL_STATUSES) | {lib.PENDING, lib.IN_PROGRESS, lib.CONFLICT} == set(Item.Status.values)
    from annotation.selectors.labels import FINAL_STATUSES

    assert set(lib.FINAL_STATUSES) == set(FINAL_STATUSES)
    assert {lib.UNANIMOUS, lib.RULE, lib.EXPERT, lib.AUDIT, lib.ADJUDICATED} <= set(Item.Origin.values)
    assert lib.NO == Label.NO


statuses = st.sampled_from(["pending", "in_progress", "agreed", "conflict", "adjudicated", "auto_negative", "imported"])
any_facts = st.builds(
    ItemFacts, is_gold=st.booleans(), judgments_per_item=st.integers(0, 3),
    answers=st.lists(st.sampled_from("YN"), max_size=4).map(tuple), open_handouts=st.integers(0, 3),
    adjudication=st.none() | st.sampled_from("YN"), flagged=st.booleans(), stored_status=statuses,
    stored_label=st.sampled_from(["", "Y", "N"]),
    stored_origin=st.sampled_from(["", "unanimous", "adjudicated", "rule", "expert", "audit", "reused", "imported"]),
)


@given(any_facts)
def test_derivation_is_idempotent_and_counts_people(f):
    once = derive_item_state(f)
    again = derive_item_state(ItemFacts(f.is_gold, f.judgments_per_item, f.answers, f.open_handouts, f.adjudication,
                                        f.flagged, once.status, once.label, once.origin))
    assert again == once
    assert (once.num_judgments, once.num_active) == (len(f.answers), len(f.answers) + f.open_handouts)
    assert (once.label != "") == (once.status in lib.FINAL_STATUSES and (once.status != "imported" or f.stored_label != ""))
