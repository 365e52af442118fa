"""After a KG import the query planner has statistics (issue 18): on SQLite without them the judge page's
known-answers look-up by (tail, relation) went through the (kg, split) index and read every train triple."""
from __future__ import annotations

import pytest
from django.db import connection

from tests._pool_support import import_umls, storage  # noqa: F401

pytestmark = pytest.mark.django_db


def test_known_answers_lookup_uses_the_tail_relation_index(storage):
    from pooling.models import Split, Triple

    kg = import_umls()
    if connection.vendor == "postgresql":  # statistics are catalog rows, visible inside the test's transaction
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'pooling_triple'")
            assert cursor.fetchone()[0] > 0
        return
    triple = Triple.objects.filter(kg=kg, split=Split.TRAIN).first()
    rows = (Triple.objects.filter(kg_id=kg.pk, split=Split.TRAIN, relation_id=triple.relation_id, tail_id=triple.tail_id)
            .exclude(head_id=triple.head_id).order_by("head__name", "head_id").values_list("head__name")[:11])
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "triple_tail_relation" in plan or "triple_head_relation_tail" in plan, plan
