"""Writes: an admin's corrections of people's labels (judgments, adjudications, expert reviews).

Under the item's row lock each writes an ``admin_edit`` version (old and new values, who, when, why), updates
the row, and recomputes the item's state (``services/item_state``): a label is never changed any other way.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.models import Adjudication, ExpertReview, Item, Judgment, LabelVersion
from annotation.services._locking import lock_waiting
from annotation.services.answers import parse_answer
from annotation.services.errors import AnnotationError
from annotation.services.item_state import recompute_locked
from annotation.services.judging import checked_source
from annotation.services.label_history import record_version, snapshot

Reason = LabelVersion.Reason


def _require_note(note: str) -> str:
    note = (note or "").strip()
    if not note:
        raise AnnotationError("say why the label is changed (a note is required; it is kept in the history)")
    return note


def edit_judgment(judgment: Judgment, *, by, note: str, answer: str | bool | None = None,
                  source_url: str | None = None, quote: str | None = None, now: datetime | None = None) -> Judgment:
    """An admin's correction of a judgment's answer, source or quote: history, then the item recomputed.
    ``by`` None records the change as made by a program (a repair command). Nothing changes (and no version is written) when the values are the ones already recorded."""
    note = _require_note(note)
    now = now or timezone.now()
    with transaction.atomic():
        item = lock_waiting(Item.objects.filter(pk=judgment.item_id)).get()
        current = Judgment.all_objects.get(pk=judgment.pk)
        if current.withdrawn_at is not None:
            raise AnnotationError("this judgment was undone by its author; it no longer counts and is not edited")
        old = snapshot(current)
        if answer is not None:
            current.answer = parse_answer(answer, cant_tell=True)
        if source_url is not None and source_url.strip() != current.source_url:
            # the rules an annotator's answer meets: a source can be cleared where the evidence policy allows it
            source = checked_source(source_url, current.answer, item.campaign)
            current.source_url, current.source_domain = source.url, source.domain
        if quote is not None:
            current.quote = quote.strip()
        if snapshot(current) == old:
            return current
        current.save(update_fields=["answer", "source_url", "source_domain", "quote"])
        record_version(current, reason=Reason.ADMIN_EDIT, changed_by_id=by.pk if by else None, changed_at=now,
                       old=old, note=note)
        recompute_locked(item)
    if current.answer != old["answer"] and not item.is_gold:
        from annotation.services.consistency import check_judgment

        check_judgment(current, item=item, campaign=item.campaign)
    return current


def edit_adjudication(adjudication: Adjudication, *, by, note: str, label: str | bool | None = None,
                      reason: str | None = None, now: datetime | None = None) -> Adjudication:
    """An admin's correction of an adjudication's label or reason: history, then the item recomputed."""
    note = _require_note(note)
    now = now or timezone.now()
    with transaction.atomic():
        item = lock_waiting(Item.objects.filter(pk=adjudication.item_id)).get()
        current = Adjudication.objects.get(pk=adjudication.pk)
        old = snapshot(current)
        if label is not None:
            current.label = parse_answer(label)
        if reason is not None:
            if not reason.strip():
                raise AnnotationError("an adjudication needs a reason")
            current.reason = reason.strip()
        if snapshot(current) == old:
            return current
        current.save(update_fields=["label", "reason"])
        record_version(current, reason=Reason.ADMIN_EDIT, changed_by_id=by.pk, changed_at=now, old=old, note=note)
        recompute_locked(item)
    return current


def edit_expert_review(review: ExpertReview, *, by, note: str, label: str | bool | None = None,
                       comment: str | None = None, now: datetime | None = None) -> ExpertReview:
    """An admin's correction of an expert's label or comment. Where the experts' label was made final on the
    item (origin expert), the item follows: the new label when the experts still agree, else the expert
    override lapses and the item falls back to its own decision."""
    note = _require_note(note)
    now = now or timezone.now()
    with transaction.atomic():
        item = lock_waiting(Item.objects.filter(pk=review.item_id)).get()
        current = ExpertReview.objects.get(pk=review.pk)
        old = snapshot(current)
        if label is not None:
            current.label = parse_answer(label)
            current.given_at = current.given_at or now
        if comment is not None:
            current.comment = comment.strip()
        if snapshot(current) == old:
            return current
        current.save(update_fields=["label", "comment", "given_at"])
        record_version(current, reason=Reason.ADMIN_EDIT, changed_by_id=by.pk, changed_at=now, old=old, note=note)
        if item.label_origin == Item.Origin.EXPERT:
            labels = set(ExpertReview.objects.filter(item=item).exclude(label="").values_list("label", flat=True))
            if len(labels) == 1:
                item.label = labels.pop()
            else:
                item.label_origin = ""
            item.save(update_fields=["label", "label_origin", "updated_at"])
        recompute_locked(item)
    return current
