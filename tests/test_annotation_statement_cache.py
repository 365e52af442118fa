"""The judging API's statements stay in psycopg's cache of converted queries (issue 21): psycopg caches the
conversion of %s placeholders per query text only up to a length (kgpool.rawrows.cache_long_statements raises
its 4096), and next-item's claim statement is longer than 4096: without the raise every request re-parsed it."""
from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Role
from kgpool.rawrows import STATEMENT_CACHE_LENGTH
from tests._annotation_support import star_campaign, users

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: psycopg's cache")]


def test_the_hot_statements_are_converted_once(tmp_path):
    from psycopg import _queries

    assert _queries.MAX_CACHED_STATEMENT_LENGTH == STATEMENT_CACHE_LENGTH  # raised when the apps were loaded
    campaign = star_campaign(tmp_path, items=6)
    statements: list[tuple[str, int]] = []

    def record(execute, sql, params, many, context):
        statements.append((sql, len(params or ())))
        return execute(sql, params, many, context)

    clients = []
    for user in users(campaign, Role.ANNOTATOR, 3):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        clients.append(client)
    with connection.execute_wrapper(record):
        for client in clients:
            handed = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()["hand_out"]
            before = _queries._query2pg.cache_info()
            answer = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handed}/judgment/",
                                 {"answer": "N", "request_id": f"r{handed}"}, format="json")
            assert answer.status_code == 201
            statements.append(("", 0))  # a submit's statements follow a next-item's
    claim = max((sql for sql, _ in statements), key=len)
    assert len(claim) > 4096, "the longest statement fits psycopg's default: the test no longer shows the raise"
    for sql, params in statements:
        assert len(sql) <= _queries.MAX_CACHED_STATEMENT_LENGTH and params <= _queries.MAX_CACHED_STATEMENT_PARAMS
    # the third submit converted no statement anew
    assert _queries._query2pg.cache_info().misses == before.misses
