"""The live queue under an adaptive judging order (issue 20), many annotators at once on PostgreSQL: the re-keys
fired by final labels run between hand-outs and submits, and still no item is handed twice to one person, every
item gets exactly two judgments, and no hand-out is left open. SQLite serialises every write transaction (BEGIN
IMMEDIATE), so there is nothing concurrent to check there."""
from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Campaign, Role
from annotation.services.judging_order import set_judging_order
from tests._annotation_support import users
from tests._judging_order_support import campaign_with_runs
from tests.test_annotation_concurrency import _check_invariants, _judge_until_done, _run_threads


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("order", ["maxmean", "kg_aware", "cal"])
def test_concurrent_judging_under_an_adaptive_order(tmp_path, order):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and concurrent re-keys: PostgreSQL only (SQLite serialises write transactions)")
    campaign, _items = campaign_with_runs(tmp_path, {"A": 20, "B": 20, "C": 20}, name=f"race-{order}")
    set_judging_order(campaign, order)
    people = users(campaign, Role.ANNOTATOR, 6)
    errors = _run_threads(_judge_until_done, [(campaign, person) for person in people for _ in range(2)])
    assert not errors, errors
    _check_invariants(campaign, 60)
    # the re-keys ran: every final label was seen by the last one (its batch is 1 on a 60-item queue)
    assert Campaign.objects.get(pk=campaign.pk).order_rewards > 0
