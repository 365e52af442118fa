"""Writes: an annotator's undo of one of their own recent answers (issue 15), while nobody else has acted on it
(the rules: ``annotation.lib.undo``).

Nothing is overwritten or deleted: the judgment stays, marked withdrawn (``Judgment.withdrawn_at``; it no
longer counts anywhere, ``Judgment.objects`` leaves it out), and an ``undo`` version records its answer and
evidence as the old values (the label history, the admin and the exports with history keep it). The item goes
back to how it was before the answer: the person's hand-out of it opens again (a fresh timeout; they judge it
again at once, or it expires and returns to the queue like any hand-out), and its state is derived again from
its facts (``services/item_state.recompute_locked``): double annotation, blindness and the queue rules are
unchanged.

Concurrency: the item's row is locked (waiting) and every rule is checked after the lock, so a second answer or
an adjudication committed first makes the undo refuse; one that waits for the lock sees the item after the undo.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from annotation.lib.undo import MESSAGES, undo_refusal
from annotation.models import Assignment, Campaign, Item, Judgment, LabelVersion
from annotation.selectors.recent_answers import undo_facts
from annotation.services._locking import lock_waiting
from annotation.services.errors import NotAllowed, UndoRefused
from annotation.services.item_state import recompute_locked
from annotation.services.label_history import label_version, snapshot

UNDO_NOTE = "undone by its author"


def undo_judgment(judgment: Judgment | int, user, *, campaign: Campaign | None = None,
                  now: datetime | None = None) -> Assignment:
    """Withdraw ``user``'s answer ``judgment`` and give them the item back; returns the reopened hand-out.

    Raises NotAllowed (not their answer, or not one of ``campaign`` when given), UndoRefused (already undone, or
    someone else acted on it: the message is the annotator's, ``exc.code`` says which rule refused)."""
    pk = judgment if isinstance(judgment, int) else judgment.pk
    now = now or timezone.now()
    item_id = Judgment.all_objects.filter(pk=pk).values_list("item_id", flat=True).first()
    if item_id is None:
        raise NotAllowed("no such answer")
    with transaction.atomic():
        locked = lock_waiting(Item.objects.select_related("campaign").filter(pk=item_id)).get()
        current = Judgment.all_objects.get(pk=pk)  # read after the lock: as the last writer left it
        if current.user_id != user.pk or (campaign is not None and locked.campaign_id != campaign.pk):
            raise NotAllowed("you can undo only your own answers in this campaign")
        if current.withdrawn_at is not None:
            raise _refused("undone", "this answer was already undone")
        campaign = locked.campaign
        refusal = undo_refusal(undo_facts([current], campaign, user, now=now)[current.pk])
        if refusal is not None:
            raise _refused(refusal, MESSAGES[refusal])
        old = snapshot(current)
        assignment = current.assignment or Assignment.objects.filter(
            item=locked, user=user, kind=Assignment.Kind.JUDGE).first()
        current.withdrawn_at, current.assignment = now, None  # the hand-out goes to the next answer
        current.save(update_fields=["withdrawn_at", "assignment"])
        version = label_version(current, reason=LabelVersion.Reason.UNDO, changed_by_id=user.pk, changed_at=now,
                                old=old, note=UNDO_NOTE)
        version.new_answer = version.new_source_url = version.new_text = ""
        version.save(force_insert=True)
        if assignment is None:  # a judgment imported without its hand-out: hand the item out afresh
            assignment = Assignment(item=locked, user=user, kind=Assignment.Kind.JUDGE)
        assignment.state, assignment.closed_at = Assignment.State.OPEN, None
        assignment.handed_out_at, assignment.expires_at = now, now + timedelta(seconds=campaign.assignment_timeout_s)
        assignment.save()
        recompute_locked(locked, judgments_per_item=campaign.judgments_per_item)
    return assignment


def _refused(code: str, message: str) -> UndoRefused:
    error = UndoRefused(message)
    error.code = code
    return error
