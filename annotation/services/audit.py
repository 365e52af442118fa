"""Writes: the expert audit (SPEC 4.2, issue 4): a stratified random sample of finished items relabelled blind
by an expert. The published campaign audited 200 triples, half positive, and found 92% agreement.

- ``draw_audit_sample`` draws the sample (default 200, half final Y and half final N, seeded) among finished
  non-gold items and stores, for each, the final label and its origin as they were (``AuditItem``).
- ``next_audit_item`` hands an expert the next sample item they have not labelled; the returned
  :class:`AuditTask` carries the question and the triple but never the final label, the judgments or the
  origin (blind).
- ``submit_audit`` records the expert's label (``ExpertReview``).
- ``apply_expert_labels`` (optional, an admin's decision) makes the expert's label final where it differs;
  the item's origin becomes ``expert``. The audit report keeps comparing with the labels as drawn.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import AuditItem, Campaign, ExpertReview, Item, Label, Role
from annotation.selectors.campaigns import has_role
from annotation.selectors.labels import FINAL_STATUSES
from annotation.selectors.quality import origin_name
from annotation.services._locking import lock_waiting
from annotation.services.errors import AnnotationError, InvalidState, NotAllowed
from annotation.services.judging import parse_answer


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
    return review


def apply_expert_labels(campaign: Campaign, expert=None) -> int:
    """Make the expert's label final where it differs from the final label (origin ``expert``); with several
    experts only items they all agree on change. Returns how many items changed."""
    reviews = ExpertReview.objects.filter(item__audit__campaign=campaign).exclude(label="")
    if expert is not None:
        reviews = reviews.filter(expert=expert)
    labels: dict[int, set[str]] = {}
    for item_id, label in reviews.values_list("item_id", "label"):
        labels.setdefault(item_id, set()).add(label)
    changed = 0
    for item_id, found in sorted(labels.items()):
        if len(found) != 1:
            continue
        (label,) = found
        with transaction.atomic():
            locked = lock_waiting(Item.objects.filter(pk=item_id)).get()
            if locked.status in FINAL_STATUSES and locked.label and locked.label != label:
                locked.label = label
                locked.label_origin = Item.Origin.EXPERT
                locked.save(update_fields=["label", "label_origin", "updated_at"])
                changed += 1
    return changed
