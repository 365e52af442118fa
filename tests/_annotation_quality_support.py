"""Builders for the judging-quality tests (issue 8): a KG with an N-N relation to judge and a 1-1 relation that
makes cardinality-impossible gold negatives possible. Not used at runtime."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from annotation.models import Campaign, Item
from annotation.services.campaigns import create_campaign
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_support import tiny_pool

URL = "https://en.wikipedia.org/wiki/X"


def gold_campaign(folder: Path, *, items: int, name: str = "gold", **options) -> Campaign:
    """``items`` pool entries (e0, likes, eK) / (eK, likes, e1) on an N-N relation ``likes``, plus a 1-1
    relation ``capital`` (c_i, capital, k_i) in train."""
    n = items + 5
    train = [(f"e{i}", "likes", f"e{(i + j) % n}") for i in range(n) for j in (1, 2)]
    test = [("e0", "likes", "e1")]
    train = [t for t in train if t != test[0]]
    train += [(f"c{i}", "capital", f"k{i}") for i in range(12)]
    entries = [("e0", "likes", f"e{k}") for k in range(2, n) if ("e0", "likes", f"e{k}") not in train]
    entries += [(f"e{k}", "likes", "e1") for k in range(3, n) if (f"e{k}", "likes", "e1") not in train]
    pool = tiny_pool(folder, name=f"{name}-kg", train=train, test=test, entries=entries[:items],
                     valid=[("e1", "likes", "e0")])
    return create_campaign(name, pool, **options)


def judge_all(campaign: Campaign, annotators, answer_of, url: str = URL, ms_of=None, submit=None) -> dict:
    """Let each annotator in turn take and answer items until nobody gets more. ``answer_of(item, user)`` gives
    the answer, ``ms_of(item, user)`` the time taken (5 s by default: the server measures it, so the helper runs
    a clock of its own from now); returns user -> list of item pks received, in order. ``submit(item, user, answer,
    url, now)``: how an answer is given (``submit_judgment`` by default)."""
    received = {user.pk: [] for user in annotators}
    active = list(annotators)
    clock = timezone.now()
    while active:
        for user in list(active):
            assignment = next_item(campaign, user, now=clock)
            if assignment is None:
                active.remove(user)
                continue
            item = Item.objects.get(pk=assignment.item_id)
            received[user.pk].append(item.pk)
            clock += timedelta(milliseconds=ms_of(item, user) if ms_of else 5000)
            (submit or _submit)(item, user, answer_of(item, user), url, clock)
    return received


def _submit(item, user, answer, url, now):
    submit_judgment(item, user, answer, url, now=now)
