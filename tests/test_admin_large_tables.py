"""Admin pages of the entity, pool entry, item and question tables stay the same size whatever the number of
entities (issue 18: 5M entities): no <select> over a table, the same queries with 100 or 2,100 entities in the
database, a count capped at ``kgpool.admin_paging.CAP``, and a search by exact key or name through indexes."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Campaign, Item
from annotation.services.campaigns import create_campaign
from pooling.models import Entity, PoolEntry, Question
from tests._annotation_support import tiny_pool
from tests._annotation_web_support import root_client  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def chain_campaign(folder, entities: int, name: str) -> Campaign:
    """A KG whose train split chains ``entities`` entities, and a campaign of 60 entries on it."""
    train = [(f"{name}{i}", "next", f"{name}{i + 1}") for i in range(entities - 1)]
    test = [(f"{name}0", "next", f"{name}2")]
    entries = [(f"{name}0", "next", f"{name}{k}") for k in range(3, 63)]
    return create_campaign(name, tiny_pool(folder, name=f"{name}-kg", train=train, test=test, entries=entries))


def fetch(client, url: str) -> tuple[int, str]:
    client.get(url)  # warm the per-process caches (content types, permissions)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured), response.content.decode()


def pages(campaign: Campaign) -> list[str]:
    entity = Entity.objects.filter(kg=campaign.pool.sample.kg).order_by("pk").first()
    entry = PoolEntry.objects.filter(pool=campaign.pool).order_by("pk").first()
    item = Item.objects.filter(campaign=campaign).order_by("pk").first()
    question = Question.objects.filter(sample=campaign.pool.sample).order_by("pk").first()
    return ["/admin/pooling/entity/", f"/admin/pooling/entity/{entity.pk}/change/", "/admin/pooling/poolentry/",
            f"/admin/pooling/poolentry/{entry.pk}/change/", "/admin/annotation/item/",
            f"/admin/annotation/item/{item.pk}/change/", "/admin/pooling/question/",
            f"/admin/pooling/question/{question.pk}/change/", f"/admin/annotation/campaign/{campaign.pk}/change/",
            "/admin/annotation/campaign/add/", "/admin/annotation/questiontemplate/add/"]


def test_pages_do_not_grow_with_the_entities(tmp_path, root_client):
    small = chain_campaign(tmp_path, 100, "small")
    urls = pages(small)
    before = {url: fetch(root_client, url) for url in urls}
    chain_campaign(tmp_path, 2000, "big")  # 2,000 more entities, 60 more entries and items
    assert Entity.objects.count() == 2100
    for url in urls:
        queries, body = fetch(root_client, url)
        old_queries, old_body = before[url]
        assert queries == old_queries, url
        assert body.count("<option") == old_body.count("<option"), url
        assert body.count("<option") < 40, url  # choices of fields and filters, never rows of a table
        assert len(body) < 1.2 * len(old_body), url


def test_count_is_capped_and_search_is_exact(tmp_path, root_client, monkeypatch):
    from kgpool import admin_paging

    campaign = chain_campaign(tmp_path, 100, "c")
    monkeypatch.setattr(admin_paging, "CAP", 30)
    response = root_client.get("/admin/pooling/entity/")
    assert response.context["cl"].result_count == 31  # 100 entities: counted up to the cap + 1
    assert response.context["cl"].full_result_count is None  # no second count of the whole table
    monkeypatch.undo()

    response = root_client.get("/admin/pooling/entity/?q=c17")
    assert [e.key for e in response.context["cl"].result_list] == ["c17"]
    assert not list(root_client.get("/admin/pooling/entity/?q=c1").context["cl"].result_list[1:])  # exact, not substring

    # pool entries and items by an entity key: those with that head or tail
    entries = root_client.get("/admin/pooling/poolentry/?q=c5").context["cl"].result_list
    assert [(e.head.key, e.tail.key) for e in entries] == [("c0", "c5")]
    items = root_client.get("/admin/annotation/item/?q=c0").context["cl"].result_list
    assert len(items) == min(Item.objects.filter(campaign=campaign).count(), 50)
    assert {i.head.key for i in items} == {"c0"}
    assert list(root_client.get("/admin/annotation/item/?q=next").context["cl"].result_list[:1])  # relation key
