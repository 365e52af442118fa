"""The API's few-query next-item path (issue 21, ``services/hand_out_sql``) shows every item exactly as the
previous path does (``selectors/web.item_view``): the question from the template in force, both entities, the
origins, whether the item came through pool hits, through the sample's questions only, or is a gold check."""
from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, Role
from annotation.selectors.web import item_view
from annotation.services.gold import add_gold_items
from annotation.services.templates import set_template
from pooling.models import Entity, PoolHit, Question
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("override", [False, True], ids=["kg-template", "campaign-template"])
def test_every_hand_out_shows_what_the_previous_path_shows(tmp_path, settings, override):
    settings.KGPOOL_JUDGING_PATH = "fast"
    campaign = star_campaign(tmp_path, items=12, name="same", gold_rate=0.2)
    assert add_gold_items(campaign).added > 0
    Entity.objects.filter(kg=campaign.pool.sample.kg, key="e0").update(
        name="Ada", description="a person", types=["person", "scientist"], url="https://example.org/ada",
        wikidata_id="Q7259")
    questions = list(Question.objects.filter(sample=campaign.pool.sample))
    for item in Item.objects.filter(campaign=campaign, is_gold=False).order_by("pk")[::2]:  # half with pool hits
        PoolHit.objects.bulk_create([PoolHit(entry_id=item.entry_id, question=q, rank=1) for q in questions])
    if override:
        relation = Item.objects.filter(campaign=campaign).first().relation
        set_template(relation, "Is {head} fond of {tail}?", campaign=campaign)
    seen = 0
    for annotator in users(campaign, Role.ANNOTATOR, 2):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
        while True:
            body = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()
            if body["item"] is None:
                break
            again = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()  # a reload: the same hand-out
            assert again == body
            assignment = Assignment.objects.get(pk=body["hand_out"])
            assert body["item"] == item_view(assignment.item).as_dict()
            assert body["request_id"] == f"assignment-{assignment.pk}"
            seen += 1
            response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{assignment.pk}/judgment/",
                                   {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X",
                                    "request_id": body["request_id"]}, format="json")
            assert response.status_code == 201, response.content
    items = Item.objects.filter(campaign=campaign)
    assert seen == 2 * items.count()  # every item, gold checks included, handed to both
    assert any("fond of" in q for q in [item_view(i).question for i in items]) == override
