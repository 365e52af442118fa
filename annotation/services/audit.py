"""Writes: the expert audit (SPEC 4.2, issue 4): a stratified random sample of finished items relabelled blind
by an expert. The published campaign audited 200 triples, half positive, and found 92% agreement.

- ``draw_audit_sample`` draws the sample (default 200, half final Y and half final N, seeded) among finished
  non-gold items and stores, for each, the final label and its origin as they were (``AuditItem``).
- ``next_audit_item`` hands an expert the next sample item they have not labelled; the returned
  :class:`AuditTask` carries the question and the triple but never the final label, the judgments or the
  origin (blind).
- ``submit_audit`` records the expert's label (``ExpertReview``).
- ``apply_expert_labels`` (an admin's decision: command ``apply_audit_labels``, button on the audit page)
  makes the expert majority label final where it differs, origin ``audit``; ties keep the current label.
  The audit report keeps comparing with the labels as drawn.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import AuditItem, Campaign, ExpertReview, Item, Label, Role
from annotation.selectors.audit import audit_decisions
from annotation.selectors.campaigns import has_role
from annotation.selectors.labels import FINAL_STATUSES
from annotation.selectors.quality import origin_name
from annotation.services._locking import lock_waiting
from annotation.services.answers import parse_answer
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed
from annotation.services.item_state import recompute_locked
from annotation.services.label_history import record_submitted


@dataclass
class AuditSampleReport:
    drawn: int
    yes: int
    no: int
    available_yes: int
    available_no: int


def draw_audit_sample(
    campaign: Campaign, size: int = 200, *, yes_share: float = 0.5, seed: int = 0, origins: list[str] | None = None,
    replace: bool = False, now: datetime | None = None,
) -> AuditSampleReport:
    """Draw the audit sample: ``round(size * yes_share)`` items with final label Y and the rest N (fewer when
    fewer exist), uniformly within each stratum, served in a shuffled order. ``origins`` restricts the
    finished items considered (e.g. ["unanimous", "adjudicated"]); by default every final label. A campaign
    has one sample; ``replace`` redraws it while no expert has answered yet."""
    if size <= 0:
        raise AnnotationError("the audit sample size must be positive")
    now = now or timezone.now()
    rng = random.Random(seed)
    with transaction.atomic():
        existing = AuditItem.objects.filter(campaign=campaign)
        if existing.exists():
            if not replace:
                raise InvalidState(f"campaign {campaign.name} already has an audit sample ({existing.count()} items)")
            if ExpertReview.objects.filter(item__audit__campaign=campaign).exclude(label="").exists():
                raise InvalidState("experts have already answered; the audit sample can no longer be redrawn")
            ExpertReview.objects.filter(item__audit__campaign=campaign).delete()
            existing.delete()
        finished = Item.objects.filter(campaign=campaign, is_gold=False, status__in=FINAL_STATUSES).exclude(label="")
        if origins:
            finished = finished.filter(label_origin__in=origins)
        strata = {
            label: list(finished.filter(label=label).order_by("pk").values_list("pk", "label_origin", "rule"))
            for label in (Label.YES, Label.NO)
        }
        want_yes = int(round(size * yes_share))
        chosen = []
        for label, want in ((Label.YES, want_yes), (Label.NO, size - want_yes)):
            rows = strata[label]
            picked = rng.sample(rows, min(want, len(rows)))
            chosen += [(pk, label, origin_name(origin, rule)) for pk, origin, rule in picked]
        rng.shuffle(chosen)
        AuditItem.objects.bulk_create(
            AuditItem(campaign=campaign, item_id=pk, position=i, final_label=label, final_origin=origin, seed=seed,
                      drawn_at=now)
            for i, (pk, label, origin) in enumerate(chosen)
        )
    yes = sum(1 for _pk, label, _o in chosen if label == Label.YES)
    return AuditSampleReport(len(chosen), yes, len(chosen) - yes, len(strata[Label.YES]), len(strata[Label.NO]))


@dataclass(frozen=True)
class AuditTask:
    """What the expert sees: the triple and its question, never the final label or the judgments."""

    item_id: int
    position: int
    head: str
    relation: str
    tail: str
    question: str
    remaining: int  # sample items this expert has still to label, this one included


def next_audit_item(campaign: Campaign, expert, *, now: datetime | None = None) -> AuditTask | None:
    """The next item of the audit sample ``expert`` has not labelled yet (their open one first); None when
    they are done. Several experts may audit the same sample independently."""
    if not has_role(campaign, expert, Role.EXPERT):
        raise NotAllowed(f"{expert} is not an expert of campaign {campaign.name}")
    from annotation.selectors.templates import item_question

    done = ExpertReview.objects.filter(expert=expert, item__audit__campaign=campaign).exclude(label="").values("item_id")
    todo = AuditItem.objects.filter(campaign=campaign).exclude(item_id__in=done).select_related(
        "item__head", "item__relation", "item__tail", "item__campaign"
    ).order_by("position")
    audit = todo.first()
    if audit is None:
        return None
    try:
        with transaction.atomic():
            ExpertReview.objects.get_or_create(item=audit.item, expert=expert)
    except IntegrityError:  # opened concurrently by the same expert
        pass
    item = audit.item
    return AuditTask(item.pk, audit.position, item.head.name or item.head.key, item.relation.key,
                     item.tail.name or item.tail.key, item_question(item), todo.count())


def submit_audit(item: Item, expert, label: str | bool, *, comment: str = "", now: datetime | None = None) -> ExpertReview:
    """Record the expert's blind label for a sample item. Repeating the same label is a no-op; a different
    label for an answered item is refused."""
    if not has_role(item.campaign, expert, Role.EXPERT):
        raise NotAllowed(f"{expert} is not an expert of campaign {item.campaign.name}")
    if not AuditItem.objects.filter(item=item).exists():
        raise InvalidState(f"item {item.pk} is not in the audit sample")
    label = parse_answer(label)
    now = now or timezone.now()
    with transaction.atomic():
        review, _ = ExpertReview.objects.select_for_update().get_or_create(item=item, expert=expert)
        if review.label:
            if review.label == label:
                return review
            raise InvalidState(f"{expert} already labelled item {item.pk} ({review.label})")
        review.label = label
        review.comment = (comment or "").strip()
        review.given_at = now
        review.save(update_fields=["label", "comment", "given_at"])
        record_submitted(review, now)
    return review


@dataclass
class AuditApplyReport:
    """What making the expert labels final did (or, with ``dry_run``, would do)."""

    answered: int = 0  # sample items at least one expert answered
    changed: list[tuple[int, str, str]] = field(default_factory=list)  # (item pk, label before, audit label)
    confirmed: int = 0  # the expert majority agrees with the current label: nothing to do
    ties: int = 0  # the experts split evenly: the current label stays
    not_final: int = 0  # items without a final label now (sent back to judging since the draw): left alone


def apply_expert_labels(campaign: Campaign, *, dry_run: bool = False) -> AuditApplyReport:
    """Make the expert-audit labels final (an admin's decision): on every sample item the experts answered, the
    expert majority label becomes the final label where it differs from the current one, with origin ``audit``
    and status ``adjudicated`` (decided above the annotators: a later import, reuse or filter revert leaves it
    alone). Ties between experts keep the current label; so does an item without a final label now. Running
    it again changes nothing new (idempotent); later expert answers can move a majority and are applied then.
    The audit report keeps comparing with the labels as drawn."""
    report = AuditApplyReport()
    for decision in audit_decisions(campaign):
        report.answered += 1
        outcome = decision.outcome
        if outcome == "confirm":
            report.confirmed += 1
        elif outcome == "tie":
            report.ties += 1
        elif outcome == "not_final":
            report.not_final += 1
        elif dry_run:
            report.changed.append((decision.item_id, decision.current, decision.decision))
        else:
            with transaction.atomic():
                locked = lock_waiting(Item.objects.filter(pk=decision.item_id)).get()
                if locked.status in FINAL_STATUSES and locked.label and locked.label != decision.decision:
                    report.changed.append((locked.pk, locked.label, decision.decision))
                    _set_audit_label(locked, decision.decision)
    return report


def _set_audit_label(item: Item, label: str) -> None:
    """Store the audit's decision on the locked item, then let the item-state service derive the rest (rule 7
    of ``annotation.lib.item_state``: the audit label decides the item)."""
    item.label = label
    item.label_origin = Item.Origin.AUDIT
    item.status = Item.Status.ADJUDICATED
    item.rule = ""  # the label is no longer a rule's (reuse copies the rule of rule labels)
    item.save(update_fields=["label", "label_origin", "status", "rule", "updated_at"])
    recompute_locked(item)
