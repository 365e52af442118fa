"""The hand-out's walk of the queue uses the partial index ``item_queue_order`` on SQLite (issue 18): with the
index's statuses as bound parameters SQLite cannot use a partial index and sorted every queued item of the
campaign on each hand-out (0.6 s for a 76,583-item campaign)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from annotation.services.distribution import queue_levels
from tests._annotation_support import star_campaign

pytestmark = pytest.mark.django_db


def test_untouched_level_walks_the_partial_index(tmp_path):
    campaign = star_campaign(tmp_path, items=6)
    user = get_user_model().objects.create_user("walker")
    untouched = queue_levels(campaign, user, campaign.judgments_per_item)[-1]
    first = untouched.first()
    assert first is not None and first.status == "pending"
    assert first.queue_key == min(campaign.items.values_list("queue_key", flat=True))
    if connection.vendor != "sqlite":
        return  # PostgreSQL plans partial indexes with parameters; its plan depends on the table's size
    sql, params = untouched[:1].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "item_queue_order" in plan and "TEMP B-TREE" not in plan, plan
