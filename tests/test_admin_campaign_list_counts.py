"""The admin's campaign list shows each campaign's item counts per status (gold checks apart): the shown rows'
counts come from one grouped query (issue 18: the counts joined every item on the list's query), and equal
the counts the list sorted by a count column computes on its query, and a count of the rows."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.admin import COUNT_COLUMNS
from annotation.models import Item
from tests._annotation_support import star_campaign
from tests.test_campaign_item_counts import varied_campaign

pytestmark = pytest.mark.django_db


def shown_counts(response) -> dict[str, dict[str, int]]:
    return {c.name: {column: getattr(c, column) for column in COUNT_COLUMNS} for c in response.context["cl"].result_list}


def test_list_counts_equal_the_sorted_lists_and_the_rows(tmp_path, client):
    varied_campaign(tmp_path / "a")
    star_campaign(tmp_path / "b", items=20, name="plain")  # more items than "counts" (14), later by name
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw"))
    expected = {}
    for name in ("counts", "plain"):
        statuses = list(Item.objects.filter(campaign__name=name, is_gold=False).values_list("status", flat=True))
        expected[name] = {status: statuses.count(status) for status in Item.Status.values}
        expected[name]["items_total"] = len(statuses)
    assert expected["counts"]["items_total"] == 14 and expected["counts"]["pending"] == 4  # gold checks apart
    page = client.get("/admin/annotation/campaign/")
    assert shown_counts(page) == expected
    total_column = page.context["cl"].list_display.index("items_total")
    name_column = page.context["cl"].list_display.index("name")
    assert [c.name for c in client.get(f"/admin/annotation/campaign/?o={name_column}").context["cl"].result_list] == [
        "counts", "plain"]
    sorted_page = client.get(f"/admin/annotation/campaign/?o=-{total_column}")
    assert [c.name for c in sorted_page.context["cl"].result_list] == ["plain", "counts"]
    assert shown_counts(sorted_page) == expected
