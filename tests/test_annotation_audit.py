"""Expert audit (SPEC 4.2, issue 4): a stratified seeded sample, served blind, agreement with final labels."""
from __future__ import annotations

import io
from dataclasses import fields

import pytest
from django.core.management import call_command

from annotation.models import AuditItem, Item, Role
from annotation.selectors.audit import audit_report
from annotation.services.audit import apply_expert_labels, draw_audit_sample, next_audit_item, submit_audit
from annotation.services.errors import InvalidState, NotAllowed
from tests._annotation_support import star_campaign, users


@pytest.fixture
def finished(tmp_path):
    """60 finished items: 20 final Y (unanimous), 40 final N (10 of them by the type rule)."""
    campaign = star_campaign(tmp_path, items=60, name="audit")
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    Item.objects.filter(pk__in=[i.pk for i in items[:20]]).update(status="agreed", label="Y", label_origin="unanimous")
    Item.objects.filter(pk__in=[i.pk for i in items[20:50]]).update(status="agreed", label="N", label_origin="unanimous")
    Item.objects.filter(pk__in=[i.pk for i in items[50:]]).update(status="auto_negative", label="N", label_origin="rule", rule="type")
    return campaign


@pytest.mark.django_db
def test_stratified_seeded_sample(finished):
    report = draw_audit_sample(finished, 20, seed=4)
    assert (report.drawn, report.yes, report.no, report.available_yes, report.available_no) == (20, 10, 10, 20, 40)
    first = list(AuditItem.objects.filter(campaign=finished).values_list("item_id", "final_label"))
    with pytest.raises(InvalidState):
        draw_audit_sample(finished, 20, seed=4)
    draw_audit_sample(finished, 20, seed=4, replace=True)
    assert list(AuditItem.objects.filter(campaign=finished).values_list("item_id", "final_label")) == first
    assert {o for o in AuditItem.objects.values_list("final_origin", flat=True)} <= {"unanimous", "rule:type"}
    # default 200, half each: capped by what exists
    small = draw_audit_sample(finished, replace=True)
    assert (small.yes, small.no) == (20, 40)


@pytest.mark.django_db
def test_blind_expert_review_and_report(finished):
    draw_audit_sample(finished, 20, seed=1)
    (expert,) = users(finished, Role.EXPERT, 1)
    (annotator,) = users(finished, Role.ANNOTATOR, 1)
    with pytest.raises(NotAllowed):
        next_audit_item(finished, annotator)
    finals = dict(AuditItem.objects.values_list("item_id", "final_label"))
    answered, flipped = 0, []
    while (task := next_audit_item(finished, expert)) is not None:
        names = {f.name for f in fields(task)}
        assert not names & {"label", "final_label", "origin", "judgments", "status"}  # blind
        assert task.question and task.remaining == 20 - answered
        label = finals[task.item_id]
        if label == "Y" and len(flipped) < 2:  # the expert disagrees on 2 of the 10 final-Y items
            label = "N"
            flipped.append(task.item_id)
        submit_audit(Item.objects.get(pk=task.item_id), expert, label, comment="checked")
        answered += 1
    assert answered == 20
    report = audit_report(finished)
    assert (report.sample, report.answered, report.overall.items, report.overall.agree) == (20, 20, 20, 18)
    assert report.overall.percent == pytest.approx(0.9)
    # kappa on (final, expert): YY=8, YN=2, NY=0, NN=10: p_o = 0.9, p_e = 0.5*0.4 + 0.5*0.6 = 0.5 -> 0.8
    assert report.overall.kappa == pytest.approx(0.8)
    assert {(r.group, r.agree, r.items) for r in report.by_final_label} == {("Y", 8, 10), ("N", 10, 10)}
    assert sorted(d[0] for d in report.disagreements) == sorted(flipped)
    with pytest.raises(InvalidState):
        submit_audit(Item.objects.get(pk=flipped[0]), expert, "Y")  # an answer cannot be changed
    assert submit_audit(Item.objects.get(pk=flipped[0]), expert, "N").label == "N"  # a retry is fine
    out = io.StringIO()
    call_command("audit_campaign", finished.name, stdout=out)
    assert "overall all: 18/20 = 90.0% kappa 0.800" in out.getvalue()
    # making the expert's labels final: origin audit; the report still compares with the labels as drawn
    assert sorted(apply_expert_labels(finished).changed) == sorted((pk, "Y", "N") for pk in flipped)
    assert set(Item.objects.filter(campaign=finished, label_origin="audit").values_list("pk", "label")) == {(pk, "N") for pk in flipped}
    assert audit_report(finished).overall.agree == 18
