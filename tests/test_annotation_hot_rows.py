"""The judging API's statements leave large columns out of their rows (issue 21, annotation/services/hot_rows): a
KG's type labels (530 KB for CoDEx) and a campaign's guidelines are neither sent by PostgreSQL nor parsed per
request, and nothing on the way reads them (no extra statement)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Campaign, Role
from annotation.selectors.campaigns import campaign_with_roles
from annotation.services import hot_rows
from annotation.services.consistency import relation_categories_by_pk
from annotation.services.distribution import next_item
from pooling.models import KnowledgeGraph, Pool
from tests._annotation_support import star_campaign, users
from tests.test_annotation_next_item_cost import NEXT_ITEM_FAST, SUBMIT_FAST

pytestmark = pytest.mark.django_db

#: the columns that can be large, as the statements alias their tables
LARGE_COLUMNS = [("c", Campaign, "guidelines"), ("c", Campaign, "relation_guidelines"),
                 ("kg", KnowledgeGraph, "type_labels"), ("kg", KnowledgeGraph, "description")]
LARGE = {f"/type/{n}": f"a type label number {n}" for n in range(5000)}


def column_names(model, fields) -> set[str]:
    return {model._meta.get_field(name).column for name in fields}


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL only: the plain statements")
def test_next_item_and_submit_leave_the_large_columns_out(tmp_path, settings):
    settings.KGPOOL_JUDGING_PATH = "fast"
    campaign = star_campaign(tmp_path, items=4)
    KnowledgeGraph.objects.filter(pk=campaign.pool.sample.kg_id).update(type_labels=LARGE, description="x" * 10_000)
    Campaign.objects.filter(pk=campaign.pk).update(guidelines="# Rules\n" * 2000, relation_guidelines={"likes": "y"})
    Pool.objects.filter(pk=campaign.pool_id).update(error="")
    first, annotator = users(campaign, Role.ANNOTATOR, 2)
    next_item(campaign, first)  # the expiry check runs (once per campaign and process, as in the cost tests)
    relation_categories_by_pk(campaign.pool.sample.kg)  # read once per KG and process
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    statements: list[list[str]] = [[], []]

    def record(into):
        def wrapper(execute, sql, params, many, context):
            if not sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")):  # the test's transaction: BEGIN / COMMIT
                into.append(sql)
            return execute(sql, params, many, context)
        return wrapper

    with connection.execute_wrapper(record(statements[0])):
        handed = client.post(f"/api/campaigns/{campaign.name}/next-item/").json()
    with connection.execute_wrapper(record(statements[1])):
        answer = client.post(f"/api/campaigns/{campaign.name}/hand-outs/{handed['hand_out']}/judgment/",
                             {"answer": "N", "request_id": handed["request_id"]}, format="json")
    assert answer.status_code == 201, answer.content
    assert len(statements[0]) == NEXT_ITEM_FAST["postgresql"] and len(statements[1]) == SUBMIT_FAST["postgresql"]
    left_out = {f"{alias}.{model._meta.get_field(name).column}" for alias, model, name in LARGE_COLUMNS}
    assert left_out <= {f"{alias}.{column}" for alias, model, fields in (
        ("c", Campaign, hot_rows.left_out(Campaign)), ("kg", KnowledgeGraph, hot_rows.left_out(KnowledgeGraph)))
        for column in column_names(model, fields)}
    for sql in statements[0] + statements[1]:
        assert not [column for column in left_out if f"{column}," in sql or f"{column} " in sql], sql[:300]


@pytest.mark.parametrize("page", ["judge", "campaign"])
def test_pages_leave_the_kgs_type_labels_out(tmp_path, client, page):
    """Every page and API request loads its campaign with the pool, sample and KG; the KG's type labels stay in
    the database (no page reads them)."""
    campaign = star_campaign(tmp_path, items=4)
    KnowledgeGraph.objects.filter(pk=campaign.pool.sample.kg_id).update(type_labels=LARGE)
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    client.force_login(annotator)
    url = {"judge": f"/campaigns/{campaign.name}/judge/", "campaign": f"/campaigns/{campaign.name}/"}[page]
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, follow=True)
    assert response.status_code == 200
    assert len(queries) > 0 and not [q for q in queries.captured_queries if "type_labels" in q["sql"]]
    found, roles = campaign_with_roles(campaign.name, annotator)
    assert "type_labels" in found.pool.sample.kg.get_deferred_fields() and roles == {Role.ANNOTATOR}
    assert found.pool.sample.kg.type_labels == LARGE  # loaded when read
