"""The judge page's origins in one statement (``origin_triples_joined``, the API's hot path) equal the
ORM-built reference (``origin_triples``) item by item: hit questions first, the questions a triple answers
when no question pooled it, the same order and limit."""
from __future__ import annotations

import random

import pytest

from annotation.models import Item
from annotation.selectors.web import origin_triples, origin_triples_joined
from pooling.models import PoolHit, Question
from tests._annotation_support import star_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("limit", [1, 2, 10])
def test_joined_origins_equal_the_reference_for_every_item(tmp_path, limit):
    campaign = star_campaign(tmp_path, items=14, name=f"origins{limit}")
    questions = list(Question.objects.filter(sample=campaign.pool.sample).order_by("position"))
    rng = random.Random(limit)
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    for item in items[::2]:  # half of the items pooled by some questions, the rest by none
        chosen = rng.sample(questions, rng.randint(1, len(questions)))
        PoolHit.objects.bulk_create([PoolHit(entry_id=item.entry_id, question=q, rank=rng.randint(1, 9))
                                     for q in chosen])
    compared = 0
    for item in items:
        expected = [o.as_dict() for o in origin_triples(item, limit=limit)]
        assert [o.as_dict() for o in origin_triples_joined(item, limit=limit)] == expected, item
        compared += bool(expected)
    assert compared == len(items)  # every item shows origins: through its hits or the questions it answers
