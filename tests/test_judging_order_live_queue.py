"""Judging orders on the live work queue (issue 20): rewards arrive with final labels, the queue follows the
order, the admin can switch orders mid-campaign, a budget stops new items, gold checks keep being served."""
from __future__ import annotations

import pytest

from annotation.models import Item, Role
from annotation.services.distribution import next_item
from annotation.services.gold import add_gold_items  # noqa: F401  (import check: gold services load)
from annotation.services.judging import submit_judgment
from annotation.services.judging_order import rekey_queue, set_judging_order
from tests._annotation_support import users
from tests._judging_order_support import campaign_with_runs

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


def judge(campaign, annotators, answer, callbacks):
    """Both annotators take the head of their queue and answer ``answer``; the item's label becomes final."""
    with callbacks(execute=True):
        first = next_item(campaign, annotators[0])
        second = next_item(campaign, annotators[1])
        assert first.item_id == second.item_id
        for person, hand_out in zip(annotators, (first, second)):
            submit_judgment(hand_out.item, person, answer, URL)
    return Item.objects.get(pk=first.item_id)


def test_maxmean_hands_out_the_other_run_after_a_miss_and_stays_after_a_hit(tmp_path,
                                                                             django_capture_on_commit_callbacks):
    campaign, items = campaign_with_runs(tmp_path, {"A": 4, "B": 4}, name="mm")
    set_judging_order(campaign, "maxmean")
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    head = judge(campaign, (a, b), "N", django_capture_on_commit_callbacks)
    assert head.status == Item.Status.AGREED and head.label == "N"
    loser, winner = ("A", "B") if head == items[("A", 1)] else ("B", "A")
    assert head == items[(loser, 1)]  # a tie at first: one of the rank-1 items
    # the loser's arm: 1/3 < the other's 1/2: the other run's rank-1 item is next for anyone
    assert next_item(campaign, c).item == items[(winner, 1)]
    with django_capture_on_commit_callbacks(execute=True):
        for person in (c, a):  # one judgment is no reward: the label is final after the second
            hand_out = next_item(campaign, person)
            assert hand_out.item == items[(winner, 1)]
            submit_judgment(hand_out.item, person, "Y", URL)
    assert Item.objects.get(pk=items[(winner, 1)].pk).label == "Y"
    # the winner's arm (2/3) keeps the lead: its rank-2 item comes next
    assert next_item(campaign, b).item == items[(winner, 2)]


@pytest.mark.parametrize("order", ["cal", "cal_top"])
def test_cal_learns_from_final_labels_which_run_is_relevant(tmp_path, django_capture_on_commit_callbacks, order):
    """Every item of run A is relevant, none of run B. The cold start alternates A and B by depth; once MIN_CLASS
    final labels of each class exist, the classifier (per-system reciprocal rank among its features) puts A's
    deeper items before B's."""
    from annotation.lib.cal_order import MIN_CLASS

    campaign, items = campaign_with_runs(tmp_path, {"A": 6, "B": 6}, name=f"cal-{order}")
    set_judging_order(campaign, order)
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    truth = {item.pk: "Y" if run == "A" else "N" for (run, _rank), item in items.items()}
    judged = []
    for _round in range(2 * MIN_CLASS):
        with django_capture_on_commit_callbacks(execute=True):
            first, second = next_item(campaign, a), next_item(campaign, b)
            assert first.item_id == second.item_id
            for person, hand_out in ((a, first), (b, second)):
                submit_judgment(hand_out.item, person, truth[first.item_id], URL)
        judged.append(first.item_id)
    runs = sorted(run for (run, _rank), item in items.items() if item.pk in judged)
    assert runs == ["A"] * MIN_CLASS + ["B"] * MIN_CLASS  # the cold start took both runs' top items
    # the model has learnt that A's items are relevant: A's next item, not B's, for anyone
    assert next_item(campaign, c).item == items[("A", MIN_CLASS + 1)]
    assert next_item(campaign, a).item == items[("A", MIN_CLASS + 1)]


def test_switching_order_mid_campaign_rekeys_the_queue(tmp_path):
    campaign, items = campaign_with_runs(tmp_path, {"A": 3, "B": 3}, name="switch")
    gold = Item.objects.create(campaign=campaign, head=items[("A", 1)].head, relation=items[("A", 1)].relation,
                               tail=items[("A", 1)].head, is_gold=True, gold_answer="N", queue_key=12345)
    set_judging_order(campaign, "depth")
    pending = Item.objects.filter(campaign=campaign, is_gold=False).order_by("queue_key")
    depths = [item.entry.depth for item in pending]
    assert depths == sorted(depths) and depths[:2] == [1, 1]
    assert Item.objects.get(pk=gold.pk).queue_key == 12345  # gold checks keep their random place
    report = set_judging_order(campaign, "random")
    keys = list(Item.objects.filter(campaign=campaign, is_gold=False).values_list("queue_key", flat=True))
    assert len(set(keys)) == 6 and report.judging_order == "random"
    assert rekey_queue(campaign).done is False  # no new final label since: nothing to do


def test_budget_stops_new_items_but_finishes_started_ones(tmp_path):
    campaign, items = campaign_with_runs(tmp_path, {"A": 3}, name="budget")
    set_judging_order(campaign, "depth", budget=1)
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    first = next_item(campaign, a)
    assert first.item == items[("A", 1)]
    submit_judgment(first.item, a, "Y", URL)
    assert next_item(campaign, a) is None  # the budget (1 item) is started: nothing new for a
    second = next_item(campaign, b)  # the started item is finished
    assert second.item == items[("A", 1)]
    submit_judgment(second.item, b, "Y", URL)
    assert next_item(campaign, c) is None
    set_judging_order(campaign, "depth", budget=2)
    assert next_item(campaign, c).item == items[("A", 2)]


def test_gold_checks_still_reach_every_annotator_under_an_adaptive_order(tmp_path,
                                                                         django_capture_on_commit_callbacks):
    campaign, items = campaign_with_runs(tmp_path, {"A": 3, "B": 3}, name="gold")
    gold = Item.objects.create(campaign=campaign, head=items[("A", 1)].head, relation=items[("A", 1)].relation,
                               tail=items[("A", 1)].head, is_gold=True, gold_answer="N", queue_key=2**30)
    set_judging_order(campaign, "kg_aware")
    a, b = users(campaign, Role.ANNOTATOR, 2)
    seen = {a.pk: [], b.pk: []}
    with django_capture_on_commit_callbacks(execute=True):
        for _round in range(20):
            for person in (a, b):
                hand_out = next_item(campaign, person)
                if hand_out is not None:
                    seen[person.pk].append(hand_out.item_id)
                    submit_judgment(hand_out.item, person, "N", URL)
    for person in (a, b):
        assert gold.pk in seen[person.pk]
        assert len(seen[person.pk]) == len(set(seen[person.pk])) == 7  # every item once, gold included
    assert Item.objects.filter(campaign=campaign, is_gold=False, status=Item.Status.AGREED).count() == 6


def test_the_reward_hook_adds_no_query_to_submit(tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    """The deciding submit of an adaptive campaign costs what a random campaign's costs: the hook only queues the
    re-key task on commit (counted here with the task's sending stubbed, as with a broker)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.services import judging_order
    from annotation.task_names import REKEY_QUEUE

    sent = []

    class Sent:  # a signature whose sending is recorded instead of run (as with a broker)
        def __init__(self, name, args):
            self.name, self.args = name, args

        def delay(self):
            sent.append((self.name, self.args))

    monkeypatch.setattr(judging_order, "signature", lambda name, args: Sent(name, args))
    counts = {}
    for order in ("random", "maxmean"):
        campaign, _items = campaign_with_runs(tmp_path, {"A": 3, "B": 3}, name=f"cost-{order}")
        set_judging_order(campaign, order)
        a, b = users(campaign, Role.ANNOTATOR, 2)
        first, second = next_item(campaign, a), next_item(campaign, b)
        submit_judgment(first.item, a, "Y", URL)
        with django_capture_on_commit_callbacks(execute=True), CaptureQueriesContext(connection) as queries:
            submit_judgment(second.item, b, "Y", URL)  # decides the item
        counts[order] = len(queries)
    assert counts["maxmean"] == counts["random"], counts
    assert [name for name, _args in sent] == [REKEY_QUEUE]  # one re-key queued, by the adaptive campaign's deciding submit
