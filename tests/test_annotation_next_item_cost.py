"""The next-item hot path (issue 6, load): the queue order it hands out, and a query count that grows neither with
the campaign's size nor with the number of questions that pooled an item."""
from __future__ import annotations

import random

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, Role
from annotation.selectors.web import item_view
from annotation.services.campaigns import create_campaign
from annotation.services.consistency import relation_categories_by_pk
from annotation.services.distribution import _first_free_item, next_item
from pooling.models import PoolHit, Question
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db


def reference_head(campaign, user, limit: int) -> int | None:
    """The queue head as SPEC'd, computed in Python: items still queued that ``user`` was never handed, with
    fewer than ``limit`` open hand-outs (gold checks: any), by (open hand-outs desc, gold as 0; queue_key; pk)."""
    seen = set(Assignment.objects.filter(user=user).values_list("item_id", flat=True))
    rows = [
        (-(0 if item.is_gold else item.num_active), item.queue_key, item.pk)
        for item in Item.objects.filter(campaign=campaign, status__in=("pending", "in_progress"))
        if item.pk not in seen and (item.is_gold or item.num_active < limit)
    ]
    return min(rows)[2] if rows else None


@pytest.mark.parametrize("limit", [2, 3])
def test_queue_head_matches_the_reference_order_on_random_states(tmp_path, limit):
    campaign = star_campaign(tmp_path, items=30, name=f"order{limit}")
    campaign.judgments_per_item = limit
    campaign.save()
    rng = random.Random(limit)
    (user,) = users(campaign, Role.ANNOTATOR, 1)
    for _round in range(25):
        for item in Item.objects.filter(campaign=campaign):
            item.num_active = rng.randrange(limit + 1)
            item.status = rng.choice(["pending", "in_progress", "agreed"]) if item.num_active == 0 else "in_progress"
            item.is_gold = rng.random() < 0.15
            item.gold_answer = "Y" if item.is_gold else ""
            item.queue_key = rng.randrange(8)  # many ties: pk breaks them
            item.save()
        Assignment.objects.filter(user=user).delete()
        for item in rng.sample(list(Item.objects.filter(campaign=campaign)), 6):
            Assignment.objects.create(item=item, user=user, state="done", handed_out_at=item.updated_at,
                                      expires_at=item.updated_at)
        with transaction.atomic():
            got = _first_free_item(campaign, user, limit)
        assert (got.pk if got else None) == reference_head(campaign, user, limit)


def add_hits(item: Item, questions: list[Question]) -> None:
    PoolHit.objects.bulk_create([PoolHit(entry_id=item.entry_id, question=q, rank=1) for q in questions])


def test_origins_come_from_every_question_that_pooled_the_item(tmp_path):
    campaign = star_campaign(tmp_path, items=4, name="hits")
    item = Item.objects.filter(campaign=campaign).order_by("pk").first()
    questions = list(Question.objects.filter(sample=campaign.pool.sample).order_by("side", "position"))
    assert [q.get_side_display() for q in questions] == ["head", "tail"]
    add_hits(item, questions)
    origins = [o.as_dict() for o in item_view(item).origins]
    assert [(o["qid"], o["question"]) for o in origins] == [
        (questions[0].qid, "(?, likes, e1)"), (questions[1].qid, "(e0, likes, ?)")
    ]
    assert {(o["head"], o["relation"], o["tail"]) for o in origins} == {("e0", "likes", "e1")}


def statements(queries: CaptureQueriesContext) -> int:
    """SQL statements of a request, savepoints apart: the test's own transaction turns the request's BEGIN and
    COMMIT (which Django does not log) into SAVEPOINT and RELEASE."""
    return sum(1 for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT")))


#: next-item on the fast path (issue 21): the annotator membership locked with the campaign's settings and the API
#: token checked (its active user joined in), the claim (queue head, hand-out insert, item count and what the item
#: shows, its origins included, one statement). SQLite (no row locks, no data-modifying WITH) checks the token on
#: its own and claims through next_item: token, membership, queue head, insert, update, template, origins.
NEXT_ITEM_FAST = {"postgresql": 2, "sqlite": 7}


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_next_item_request_costs_a_fixed_number_of_queries(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    small = star_campaign(tmp_path, items=4, name="few")
    large = star_campaign(tmp_path, items=60, name="many")
    for campaign in (small, large):  # every item pooled by both questions of the sample
        questions = list(Question.objects.filter(sample=campaign.pool.sample))
        for item in Item.objects.filter(campaign=campaign):
            add_hits(item, questions)
    counts = []
    for campaign in (small, large):
        a, b = users(campaign, Role.ANNOTATOR, 2)
        next_item(campaign, a)  # b's request then takes the partly handed-out item (the first busy level)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=b).key}")
        with CaptureQueriesContext(connection) as queries:
            response = client.post(f"/api/campaigns/{campaign.name}/next-item/")
        assert response.status_code == 200 and len(response.json()["item"]["origins"]) == 2
        counts.append(statements(queries) if path == "fast" else len(queries))
    assert counts[0] == counts[1]
    if path == "fast":
        assert counts[0] == NEXT_ITEM_FAST[connection.vendor], counts
        return
    # legacy path: token, campaign with roles, own hand-out, queue head (two busy levels at most), hand-out insert, item
    # update, template, questions, their triples (the expiry check ran for a's request moments before)
    assert counts[0] <= 11, counts


#: submit on the fast path (PostgreSQL): the item locked with the campaign, the API token checked (its active user
#: must be the hand-out's), the role, the hand-out, the judgments and the consistency check's unchanging facts read
#: (the KG's splits stating the triple, whether another campaign has it); one statement writing the judgment, its
#: history row, the hand-out and the item. The check's reads after the commit (one statement) only when something
#: there can contradict the answer: another campaign's item of the triple, or a single-answer question for a "yes"
#: (SUBMIT_FAST_READING). SQLite takes submit_judgment.
SUBMIT_FAST = {"postgresql": 2}
SUBMIT_FAST_READING = {"postgresql": 3}


@pytest.mark.parametrize("answer", ["Y", "N"])
@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_submit_request_costs_a_fixed_number_of_queries(tmp_path, settings, path, answer):
    settings.KGPOOL_JUDGING_PATH = path
    counts = []
    for campaign in (star_campaign(tmp_path, items=4, name="few"), star_campaign(tmp_path, items=60, name="many")):
        relation_categories_by_pk(campaign.pool.sample.kg)  # computed once per KG and process (two reads)
        per_request = []
        for n, annotator in enumerate(users(campaign, Role.ANNOTATOR, 2)):
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
            hand_out = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()["hand_out"]
            body = {"answer": answer, "source_url": "https://en.wikipedia.org/wiki/X", "request_id": f"r{n}"}
            with CaptureQueriesContext(connection) as queries:
                response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out}/judgment/", body,
                                       format="json")
            assert response.status_code == 201, response.content
            per_request.append(statements(queries) if path == "fast" else len(queries))
        item = Assignment.objects.get(pk=hand_out).item
        assert item.status == Item.Status.AGREED and item.num_judgments == 2  # the second submit decided it
        counts.append(per_request)
    assert counts[0] == counts[1], counts
    if path == "fast" and connection.vendor in SUBMIT_FAST:
        assert set(counts[0]) == {SUBMIT_FAST[connection.vendor]}, counts
        return
    # legacy path (and SQLite): token, campaign with roles, hand-out, item lock, judgments (retry, prior, answers in one), assignment,
    # judgment insert, its history row (LabelVersion, issue 13), assignment and item updates, savepoint/commit,
    # then the consistency check's reads
    assert max(counts[0]) <= 15, counts


@pytest.mark.parametrize("answer", ["Y", "N"])
def test_a_submit_reads_after_its_commit_when_another_campaign_has_the_triple(tmp_path, settings, answer):
    """The cross-campaign read runs after the commit, as before, whenever another campaign on the KG has an item
    of the triple (here: a second campaign over the same pool)."""
    if connection.vendor not in SUBMIT_FAST:
        pytest.skip("PostgreSQL only: the few-statement submit")
    settings.KGPOOL_JUDGING_PATH = "fast"
    campaign = star_campaign(tmp_path, items=4, name="first")
    create_campaign("second", campaign.pool, reuse=False)
    relation_categories_by_pk(campaign.pool.sample.kg)
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    hand_out = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()["hand_out"]
    with CaptureQueriesContext(connection) as queries:
        response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{hand_out}/judgment/",
                               {"answer": answer, "source_url": "https://en.wikipedia.org/wiki/X"}, format="json")
    assert response.status_code == 201, response.content
    assert statements(queries) == SUBMIT_FAST_READING[connection.vendor]


@pytest.mark.parametrize("path", ["fast", "legacy"])
def test_submit_with_next_costs_a_submit_and_a_next_item(tmp_path, settings, path):
    """``"next": true`` (one round trip per item): the submit's statements, then next-item's (its first one locks
    the membership by the user the submit found, no token to check again); no more, at any campaign size."""
    settings.KGPOOL_JUDGING_PATH = path
    counts = []
    for campaign in (star_campaign(tmp_path, items=4, name="few"), star_campaign(tmp_path, items=60, name="many")):
        relation_categories_by_pk(campaign.pool.sample.kg)  # computed once per KG and process (two reads)
        a, b = users(campaign, Role.ANNOTATOR, 2)
        next_item(campaign, a)  # b's next hand-out then takes the partly handed-out item (the first busy level)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=b).key}")
        first = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()
        body = {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/X", "request_id": first["request_id"],
                "next": True}
        with CaptureQueriesContext(connection) as queries:
            response = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{first['hand_out']}/judgment/", body,
                                   format="json")
        assert response.status_code == 201, response.content
        handed = response.json()["next"]
        assert handed["hand_out"] not in (None, first["hand_out"]) and len(handed["item"]["origins"]) >= 1
        counts.append(statements(queries) if path == "fast" else len(queries))
    assert counts[0] == counts[1], counts
    if path == "fast" and connection.vendor in SUBMIT_FAST:
        assert counts[0] == SUBMIT_FAST[connection.vendor] + NEXT_ITEM_FAST[connection.vendor], counts
    else:
        assert counts[0] <= 15 + 11, counts
