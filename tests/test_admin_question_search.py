"""The admin's question search is exact, like the entity, entry and item searches (issue 18: a substring of the
anchor's name joined every question to the entity table): a qid, an anchor's key or name, or a relation key."""
from __future__ import annotations

import pytest

from pooling.models import Entity, Question
from tests.test_admin_large_tables import chain_campaign

pytestmark = pytest.mark.django_db


def found(client, term: str) -> list[str]:
    return sorted(q.qid for q in client.get("/admin/pooling/question/", {"q": term}).context["cl"].result_list)


def test_questions_are_found_by_exact_qid_anchor_or_relation(tmp_path, admin_client):
    campaign = chain_campaign(tmp_path, 100, "q")
    questions = list(Question.objects.filter(sample=campaign.pool.sample).select_related("anchor", "relation"))
    first = questions[0]
    assert found(admin_client, first.qid) == [first.qid]
    anchored = sorted(q.qid for q in questions if q.anchor_id == first.anchor_id)
    assert found(admin_client, first.anchor.key) == anchored
    Entity.objects.filter(pk=first.anchor_id).update(name="Zero Point")
    assert found(admin_client, '"Zero Point"') == anchored  # quotes keep a name with a space whole
    assert found(admin_client, "Zero") == []
    by_relation = sorted(q.qid for q in questions if q.relation_id == first.relation_id)
    assert len(by_relation) == len(questions) == 2  # the test triple's head and tail questions, one relation
    assert found(admin_client, first.relation.key) == by_relation
    assert found(admin_client, first.anchor.key[:-1] + "zz") == []  # not a substring search
