"""Writes: annotators' judgments (double annotation, SPEC 4.2)."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.lib.evidence import source_required
from annotation.lib.sources import Source, SourceError, check_source
from annotation.models import Assignment, Item, Judgment
from annotation.services._locking import lock_waiting
from annotation.services.answers import check_comment, parse_answer
from annotation.services.errors import AlreadyJudged, AnnotationError, InvalidSource, NotAssigned
from annotation.services.item_state import settle_after_judgment
from annotation.services.label_history import record_submitted

_MAX_MS = 2**31 - 1  # the column's range (a hand-out may last longer than 24.8 days in theory)


def submit_judgment(
    item: Item,
    user,
    answer: str | bool,
    source_url: str,
    *,
    quote: str = "",
    client_time_ms: int | None = None,
    request_id: str = "",
    now: datetime | None = None,
) -> Judgment:
    """Record ``user``'s answer for an item handed to them; returns the judgment.

    Idempotent: a retry (same ``request_id`` and answer, or the same answer and source for the same item) returns
    the judgment already recorded. Errors: NotAssigned (never handed out, skipped, or its hand-out expired, whether
    or not it went back to the queue yet), AlreadyJudged (a different answer for an item already judged),
    InvalidSource. The time on task is measured here, from the hand-out to ``now``; the client's own figure
    (``client_time_ms``, e.g. the page's visible time) is kept beside it as a hint, never above the server's.
    With the last judgment the item is decided: the same answer -> agreed (origin unanimous); different
    answers, or any can't tell (C, which needs a comment in ``quote``) -> conflict (adjudication queue); an item carrying a consistency flag goes to adjudication even
    when the answers agree. After the write the judgment is checked for consistency (issue 8,
    ``services/consistency.check_judgment``): contradicting items are flagged and routed to adjudication.
    The campaign's evidence policy says for which answers a source is required; a source given is always checked.
    """
    now = now or timezone.now()
    answer = parse_answer(answer, cant_tell=True)
    check_comment(answer, quote)
    request_id = (request_id or "").strip()
    campaign = item.campaign
    with transaction.atomic():
        locked = lock_waiting(Item.objects.filter(pk=item.pk)).get()
        rows = list(Judgment.objects.filter(judgments_to_read(locked, user, request_id)).order_by())
        earlier, source = earlier_judgment(rows, locked, user, answer, source_url, request_id, campaign)
        if earlier is not None:
            return earlier
        assignment = Assignment.objects.filter(item=locked, user=user, kind=Assignment.Kind.JUDGE).first()
        judgment = new_judgment(locked, user, assignment, answer, source, quote, client_time_ms, request_id, now)
        judgment.save(force_insert=True)
        record_submitted(judgment, now)
        settle(locked, assignment, rows, answer, campaign, now)
        assignment.save(update_fields=["state", "closed_at"])
        locked.save(update_fields=["num_judgments", "status", "label", "label_origin", "updated_at"])
    after_judgment(judgment, locked, campaign)
    return judgment


def judgments_to_read(locked: Item, user, request_id: str) -> Q:
    """The judgments a submit reads under the item's lock, in one query: a retry by request id (any item of this
    user), this user's prior judgment of the item, and (to decide the item with its last judgment) the item's
    other judgments; gold checks, judged by every annotator and never decided, only need this user's."""
    mine = Q(item=locked, user=user) if locked.is_gold else Q(item=locked)
    if request_id:
        mine |= Q(user=user, request_id=request_id)
    return mine


def earlier_judgment(rows: list[Judgment], locked: Item, user, answer: str, source_url: str, request_id: str,
                     campaign) -> tuple[Judgment | None, object]:
    """(the judgment already recorded for this request, None) for a retry, else (None, the checked source).
    Raises AnnotationError (request id used for another item), InvalidSource, AlreadyJudged."""
    retried = next((j for j in rows if request_id and j.user_id == user.pk and j.request_id == request_id), None)
    if retried is not None:
        if retried.item_id != locked.pk:
            raise AnnotationError(f"request id {request_id!r} was already used for another item")
        if retried.answer != answer:  # no retry: another answer under the same id (a second tab of the same page)
            raise AlreadyJudged.of(user, locked, retried)
        return retried, None
    source = checked_source(source_url, answer, campaign)
    prior = next((j for j in rows if j.item_id == locked.pk and j.user_id == user.pk), None)
    if prior is not None:
        if prior.answer == answer and prior.source_url == source.url:
            return prior, None
        raise AlreadyJudged.of(user, locked, prior)
    return None, source


def new_judgment(locked: Item, user, assignment: Assignment | None, answer: str, source, quote: str,
                 client_time_ms: int | None, request_id: str, now: datetime) -> Judgment:
    """The judgment to store (unsaved) once the user's hand-out of the item, read under its lock, is open;
    NotAssigned when there is none or it is closed or expired."""
    if assignment is None:
        raise NotAssigned(f"item {locked.pk} was not handed to {user}")
    if assignment.state != Assignment.State.OPEN:
        raise NotAssigned(f"the hand-out of item {locked.pk} to {user} is {assignment.get_state_display()}; ask for new work")
    if assignment.expires_at <= now:  # expired means closed, before release_expired gets to it too
        raise NotAssigned(f"the hand-out of item {locked.pk} to {user} expired; ask for new work")
    time_on_task_ms = min(max(0, (now - assignment.handed_out_at) // timedelta(milliseconds=1)), _MAX_MS)
    if client_time_ms is not None:
        client_time_ms = min(max(0, int(client_time_ms)), time_on_task_ms)
    return Judgment(
        item=locked, user=user, assignment=assignment, answer=answer, source_url=source.url,
        source_domain=source.domain, quote=quote.strip(), given_at=now, time_on_task_ms=time_on_task_ms,
        client_time_ms=client_time_ms, request_id=request_id,
    )


def settle(locked: Item, assignment: Assignment, rows: list[Judgment], answer: str, campaign, now: datetime) -> None:
    """The hand-out closed and the item counted and decided with the new judgment (on the instances; the
    caller writes them)."""
    assignment.state = Assignment.State.DONE
    assignment.closed_at = now
    locked.num_judgments += 1
    if locked.status in (Item.Status.PENDING, Item.Status.IN_PROGRESS):
        settle_after_judgment(locked, campaign.judgments_per_item, [j.answer for j in rows if j.item_id == locked.pk] + [answer])


def after_judgment(judgment: Judgment, locked: Item, campaign) -> None:
    """After the submit's transaction: the reward of adaptive orders, and the consistency check."""
    if locked.status == Item.Status.AGREED:  # this judgment made the label final: the reward of adaptive orders
        from annotation.services.judging_order import label_final

        label_final(campaign)
    if not locked.is_gold:
        # Outside the item's transaction: the check locks each item it flags in turn (one lock at a time).
        from annotation.services.consistency import check_judgment

        check_judgment(judgment, item=locked, campaign=campaign, known=getattr(locked, "known_facts", None))
    return judgment


_NO_SOURCE = Source(url="", domain="")


def checked_source(source_url: str, answer: str, campaign) -> Source:
    """The normalised source, or no source where the evidence policy lets ``answer`` go without one."""
    if not (source_url or "").strip() and not source_required(campaign.evidence_policy, answer):
        return _NO_SOURCE
    try:
        return check_source(source_url, campaign.allowed_domains)
    except SourceError as exc:
        raise InvalidSource(str(exc)) from None
