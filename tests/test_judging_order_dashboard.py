"""The judging-order page (issue 20): the admin switches order and budget there, and sees the positives found, the
estimate of those still unjudged and the ranking's stability, each checked here against a hand computation."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.judging_order import JudgingState, PoolView
from annotation.lib.judging_progress import ranking_stability, unjudged_positives_estimate
from annotation.models import Campaign, Item, Role
from tests._annotation_web_support import member
from tests._judging_order_support import campaign_with_runs


def test_estimate_uses_the_yield_of_each_system_and_rank():
    # system 0 retrieves items 0, 1 (rank 1) and 2 (rank 2); system 1 retrieves 3 (rank 1) and 2 (rank 1)
    pool = PoolView.build(4, [0, 1, 2, 3, 2], [0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [1, 1, 2, 1, 1], num_systems=2,
                          num_questions=1)
    state = JudgingState(np.array([True, False, False, True]), np.array([True, False, False, False]))
    # cells: (0, rank 1): 1 Y of 1 -> 2/3; (0, rank 2): none -> 1/2; (1, rank 1): 0 of 1 -> 1/3
    # unjudged: item 1 -> 2/3; item 2 -> max(1/2, 1/3) = 1/2
    assert unjudged_positives_estimate(pool, state) == pytest.approx(2 / 3 + 1 / 2)


def test_stability_compares_the_ranking_now_with_the_ranking_step_labels_earlier():
    # systems 0, 1, 2 retrieve items {0, 1}, {2, 3}, {4, 5}; labels became final in the order 0, 2, 4, 1, 3, 5
    pool = PoolView.build(6, range(6), [0, 0, 1, 1, 2, 2], [0] * 6, [1, 2] * 3, num_systems=3, num_questions=1)
    positive = np.array([True, False, True, True, False, True])
    rows = ranking_stability(pool, np.array([0, 2, 4, 1, 3, 5]), positive, step=3, points=2)
    # after 6 labels precision (1/2, 1, 1/2); after 3: (1/2, 1/2, 0); after 0: (0, 0, 0) (constant: tau undefined)
    assert [(r["labels"], r["previous"]) for r in rows] == [(6, 3), (3, 0)]
    # (1/2, 1, 1/2) vs (1/2, 1/2, 0): pairs 01 (-, tie) 02 (tie, +) 12 (+, +): tau-b = 1 / sqrt(2 * 2)
    assert rows[0]["tau"] == pytest.approx(0.5)
    assert np.isnan(rows[1]["tau"])


@pytest.mark.django_db
def test_admin_switches_order_and_budget_and_sees_the_progress(tmp_path, client):
    campaign, items = campaign_with_runs(tmp_path, {"A": 3, "B": 3}, name="dash")
    for rank, label in ((1, "Y"), (2, "Y")):
        Item.objects.filter(pk=items[("A", rank)].pk).update(status=Item.Status.AGREED, label=label,
                                                             label_origin=Item.Origin.UNANIMOUS)
    Item.objects.filter(pk=items[("B", 1)].pk).update(status=Item.Status.AGREED, label="N",
                                                      label_origin=Item.Origin.UNANIMOUS)
    client.force_login(member(campaign, "boss", Role.ADMIN))
    page = client.get(f"/campaigns/{campaign.name}/manage/order/")
    assert page.status_code == 200
    progress = page.context["progress"]
    assert (progress.final, progress.positives, progress.pool_items) == (3, 2, 6)
    # unjudged: (A, 3): cell (A, 3) has no judged item -> 1/2; (B, 2), (B, 3): 1/2 each -> 1.5
    assert progress.estimate_unjudged == pytest.approx(1.5)
    response = client.post(f"/campaigns/{campaign.name}/manage/order/", {"order": "maxmean", "budget": "4"})
    assert response.status_code == 302
    campaign = Campaign.objects.get(pk=campaign.pk)
    assert (campaign.judging_order, campaign.item_budget) == ("maxmean", 4)
    # the queue follows at once: A (2 Y of 2) leads, its rank-3 item is first
    head = Item.objects.filter(campaign=campaign, status="pending").order_by("queue_key").first()
    assert head == items[("A", 3)]
    bad = client.post(f"/campaigns/{campaign.name}/manage/order/", {"order": "sideways"})
    assert bad.status_code == 400
