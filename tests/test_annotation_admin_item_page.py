"""The admin's Item pages stay cheap on a big campaign (issue 15: the change page took 5 s, a ``reused_from``
select of every item): foreign keys are raw ids or read-only, never a select of a table, and the list page
makes the same number of queries whatever the number of items shown."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Item
from tests._annotation_support import star_campaign
from tests._annotation_web_support import root_client  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def queries(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_change_page_has_no_select_of_items(tmp_path, root_client):
    earlier = star_campaign(tmp_path, items=6, name="earlier")
    later = star_campaign(tmp_path, items=6, name="later")
    item = Item.objects.filter(campaign=later).first()
    Item.objects.filter(pk=item.pk).update(reused_from=Item.objects.filter(campaign=earlier).first())
    _count, body = queries(root_client, f"/admin/annotation/item/{item.pk}/change/")
    selects = re.findall(r'<select name="([^"]+)"', body)
    assert selects == ["gold_answer"]  # the only editable choice; no list of items, entities or relations
    assert body.count("<option") <= 3


def test_list_page_queries_do_not_grow_with_the_items(tmp_path, root_client):
    star_campaign(tmp_path, items=3, name="small")
    few, _ = queries(root_client, "/admin/annotation/item/")
    star_campaign(tmp_path, items=12, name="bigger")
    many, body = queries(root_client, "/admin/annotation/item/")
    assert body.count('class="action-select"') == 15
    assert many == few
