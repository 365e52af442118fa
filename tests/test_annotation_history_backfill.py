"""The migration that starts the label history (issue 13) gives every judgment, adjudication and answered expert
review recorded before it one ``initial`` version with its current values (earlier changes were never kept)."""
from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from annotation.models import Adjudication, ExpertReview, Item, Judgment, LabelVersion
from tests._annotation_support import star_campaign

pytestmark = pytest.mark.django_db
backfill = importlib.import_module("annotation.migrations.0007_judgment_history_backfill").backfill


def test_backfill_gives_each_existing_label_an_initial_version(tmp_path):
    campaign = star_campaign(tmp_path, items=2, name="backfill")
    first, second = Item.objects.filter(campaign=campaign).order_by("pk")
    User = get_user_model()
    ann, adj, exp = (User.objects.create_user(f"backfill-{n}") for n in ("ann", "adj", "exp"))
    when = timezone.now()
    judgment = Judgment.objects.create(item=first, user=ann, answer="Y", source_url="https://en.wikipedia.org/wiki/A",
                                       source_domain="wikipedia.org", quote="q", given_at=when)
    Adjudication.objects.create(item=first, adjudicator=adj, label="N", reason="r", decided_at=when)
    ExpertReview.objects.create(item=second, expert=exp, label="Y", comment="c", given_at=when)
    ExpertReview.objects.create(item=first, expert=exp)  # opened, never answered: nothing to record
    backfill(apps, SimpleNamespace(connection=connection))
    rows = sorted(LabelVersion.objects.values_list("kind", "item_id", "author__username", "reason", "old_answer",
                                                   "new_answer", "new_source_url", "new_text", "changed_at"))
    assert rows == sorted([
        ("judgment", first.pk, "backfill-ann", "initial", "", "Y", "https://en.wikipedia.org/wiki/A", "q", when),
        ("adjudication", first.pk, "backfill-adj", "initial", "", "N", "", "r", when),
        ("expert", second.pk, "backfill-exp", "initial", "", "Y", "", "c", when),
    ])
    assert LabelVersion.objects.get(kind="judgment").judgment_id == judgment.pk
