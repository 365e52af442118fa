"""The next judging page, prepared while the person reads the current item (issue 15: the next question on screen
in under 100 ms after Enter).

The hand-out itself cannot be made early: a person holds one open hand-out per campaign, and their next item is
chosen when the current one closes (``services/distribution.next_item``, unchanged). What can be made early is
the costly, person-independent part of the next page: the item's view and its KG context (facts, known answers,
why asked: a dozen queries). ``prepare_next`` (judge.js asks for it once a page is shown) looks up the item that
``next_item`` would hand out as the queue stands now, read only (no lock, no hand-out, nothing sent back to the
browser), and keeps those parts in the cache; the save that follows takes them (``take_prepared``) when the hand-out
is that item, and computes them as before when it is not (someone else took it, a gold check came first...).
Kept a few minutes at most and taken once, so an entity renamed meanwhile shows at the next item."""
from __future__ import annotations

from django.core.cache import cache

from annotation.models import Campaign, Item
from annotation.selectors.kg_context import KgContext, kg_context
from annotation.selectors.web import ItemView, item_view
from annotation.services.distribution import queue_levels

PREPARED_FOR_S = 300


def _key(campaign: Campaign, user, item_id: int) -> str:
    # the campaign's creation time too: ids come back in a database made again (tests), a stale entry must not
    return f"kgpool:next-page:{campaign.pk}:{campaign.created_at.timestamp()}:{user.pk}:{item_id}"


def likely_next_item(campaign: Campaign, user) -> Item | None:
    """The item ``next_item`` would hand ``user`` once their open hand-out closes, as the queue stands now: the
    first row of the first non-empty queue level (items ever handed to the user, the open one included, are not
    in their queue). Read only."""
    for level in queue_levels(campaign, user, campaign.judgments_per_item):
        item = level.select_related("head", "tail", "relation").first()
        if item is not None:
            return item
    return None


def prepare_next(campaign: Campaign, user) -> None:
    item = likely_next_item(campaign, user)
    if item is None:
        return
    item.campaign = campaign
    cache.set(_key(campaign, user, item.pk), (item_view(item), kg_context(item, campaign)), PREPARED_FOR_S)


def take_prepared(campaign: Campaign, user, item_id: int) -> tuple[ItemView, KgContext] | None:
    """The parts ``prepare_next`` made for ``item_id``, once (None when it made none for that item)."""
    key = _key(campaign, user, item_id)
    prepared = cache.get(key)
    if prepared is not None:
        cache.delete(key)
    return prepared
