"""Reads: a person's recent answers in a campaign and whether each may still be undone (``annotation.lib.undo``)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from annotation.lib.undo import MESSAGES, RECENT_ANSWERS, UndoFacts, undo_refusal
from annotation.models import Adjudication, Assignment, AuditItem, Campaign, ExpertReview, Item, Judgment


def recent_judgments(campaign: Campaign, user, limit: int = RECENT_ANSWERS):
    """The person's last ``limit`` active answers in the campaign, newest first (with their items)."""
    return (Judgment.objects.filter(user=user, item__campaign=campaign).select_related("item__head", "item__relation",
                                                                                       "item__tail")
            .order_by("-given_at", "-pk")[:limit])


def undo_facts(judgments: list[Judgment], campaign: Campaign, user, *, now: datetime | None = None,
               recent_ids: set[int] | None = None) -> dict[int, UndoFacts]:
    """Judgment pk -> the facts the undo rules read, for some of ``user``'s answers (a few queries for all).
    ``recent_ids``: the pks of the person's last answers (read here when not given)."""
    now = now or timezone.now()
    if recent_ids is None:
        recent_ids = set(recent_judgments(campaign, user).values_list("pk", flat=True))
    items = {j.item_id for j in judgments}
    others: dict[int, list[tuple[datetime, int]]] = {}
    for item_id, given_at, pk in (Judgment.objects.filter(item_id__in=items).exclude(user=user)
                                  .values_list("item_id", "given_at", "pk")):
        others.setdefault(item_id, []).append((given_at, pk))
    adjudicated = set(Adjudication.objects.filter(item_id__in=items).values_list("item_id", flat=True))
    held = set(Assignment.objects.filter(item_id__in=items, kind=Assignment.Kind.ADJUDICATE,
                                         state=Assignment.State.OPEN, expires_at__gt=now)
               .values_list("item_id", flat=True))
    reviewed = set(ExpertReview.objects.filter(item_id__in=items).values_list("item_id", flat=True))
    reviewed |= set(AuditItem.objects.filter(item_id__in=items).values_list("item_id", flat=True))
    reused = set(Item.objects.filter(reused_from_id__in=items).values_list("reused_from_id", flat=True))
    facts = {}
    for j in judgments:
        later = sum(1 for given_at, pk in others.get(j.item_id, ()) if (given_at, pk) > (j.given_at, j.pk))
        facts[j.pk] = UndoFacts(
            recent=j.pk in recent_ids, later_answers_by_others=later, adjudicated=j.item_id in adjudicated,
            adjudication_open=j.item_id in held, expert_reviewed=j.item_id in reviewed,
            reused_elsewhere=j.item_id in reused,
        )
    return facts


@dataclass(frozen=True)
class RecentAnswer:
    judgment: Judgment
    head: str
    relation: str
    tail: str
    refusal: str | None  # why it cannot be undone (``annotation.lib.undo.MESSAGES`` key); None: it can

    @property
    def can_undo(self) -> bool:
        return self.refusal is None

    @property
    def refusal_message(self) -> str:
        return MESSAGES.get(self.refusal, "") if self.refusal else ""


def recent_answers(campaign: Campaign, user, *, now: datetime | None = None) -> list[RecentAnswer]:
    """The "My recent answers" page: the person's last answers, newest first, each with its undo verdict."""
    judgments = list(recent_judgments(campaign, user))
    facts = undo_facts(judgments, campaign, user, now=now, recent_ids={j.pk for j in judgments})
    return [RecentAnswer(j, j.item.head.name or j.item.head.key, j.item.relation.key, j.item.tail.name or j.item.tail.key,
                         undo_refusal(facts[j.pk])) for j in judgments]


def last_answer(campaign: Campaign, user) -> Judgment | None:
    """The person's most recent active answer in the campaign (what Backspace undoes)."""
    return Judgment.objects.filter(Q(user=user) & Q(item__campaign=campaign)).order_by("-given_at", "-pk").first()
