"""The next-item fast path's first statement (issue 21): the offered token's membership is one index look-up,
whatever the planner knows of the tables. Joined to the token only, PostgreSQL walked every annotator of the
campaign on tables never analysed (autovacuum off: this machine's server), 0.65 ms at 460 annotators."""
from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation.models import Membership, Role
from annotation.services.hand_out_sql import locked_annotator_campaign
from kgpool.security import OfferedToken
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db


def plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def membership_rows_read(sql: str) -> int:
    """Rows of the membership table that the statement's plan reads (EXPLAIN ANALYZE, rolled back)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        (plan,) = cursor.fetchone()
        transaction.set_rollback(True)
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return sum(node["Actual Rows"] * node["Actual Loops"] for node in plan_nodes(plan[0]["Plan"])
               if node.get("Relation Name") == Membership._meta.db_table)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only: the statement is PostgreSQL's")
def test_the_membership_lock_reads_one_membership_row_however_many_annotators(tmp_path):
    campaign = star_campaign(tmp_path, items=4)
    annotators = users(campaign, Role.ANNOTATOR, 60)
    users(campaign, Role.ADJUDICATOR, 3)
    key = Token.objects.create(user=annotators[37]).key
    with connection.cursor() as cursor:  # as a fresh database (and one with autovacuum off) has them
        cursor.execute(f"SELECT reltuples FROM pg_class WHERE relname = '{Membership._meta.db_table}'")
        assert cursor.fetchone()[0] <= 0, "the membership table has statistics: the test would not show the plan"
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        found = locked_annotator_campaign(campaign.name, OfferedToken(key))
    assert found is not None and found[0] == campaign and found[1] == annotators[37]
    (statement,) = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
    assert membership_rows_read(statement) == 1

    # an offered token of no annotator of the campaign: no row, and still one look-up (of nothing)
    stranger = Token.objects.create(user=users(campaign, Role.ADJUDICATOR, 1, prefix="other")[0]).key
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert locked_annotator_campaign(campaign.name, OfferedToken(stranger)) is None
    (statement,) = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
    assert membership_rows_read(statement) <= 1
