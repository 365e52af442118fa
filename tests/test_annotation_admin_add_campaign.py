"""The admin's "Add campaign" makes a real campaign (issue 13, item 9): one item per pool entry and the KG's
default question templates, as ``manage.py create_campaign`` does (it used to create an empty campaign); the pool
of an existing campaign is read-only."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Campaign, Item, Membership, QuestionTemplate
from pooling.models import PoolEntry, Relation
from tests._annotation_support import star_campaign

pytestmark = pytest.mark.django_db


def test_add_campaign_in_the_admin_creates_its_items_and_templates(tmp_path):
    pool = star_campaign(tmp_path, items=5, name="first").pool
    QuestionTemplate.objects.filter(kg=pool.sample.kg).delete()
    root = get_user_model().objects.create_superuser("add-root", password="pw-root-123")
    client = Client()
    client.force_login(root)
    response = client.post("/admin/annotation/campaign/add/", {
        "name": "from-admin", "description": "", "pool": pool.pk, "allowed_domains": json.dumps(["en.Wikipedia.org"]),
        "assignment_timeout_s": 600, "gold_rate": 0.0, "rushed_factor": 0.25, "gold_threshold": 0.7,
        "evidence_policy": "never",
        "memberships-TOTAL_FORMS": 1, "memberships-INITIAL_FORMS": 0, "memberships-0-user": root.pk,
        "memberships-0-role": "admin",
        "templates-TOTAL_FORMS": 0, "templates-INITIAL_FORMS": 0,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(name="from-admin")
    assert Item.objects.filter(campaign=campaign).count() == PoolEntry.objects.filter(pool=pool).count() == 5
    assert set(Item.objects.filter(campaign=campaign).values_list("entry_id", flat=True)) == set(
        PoolEntry.objects.filter(pool=pool).values_list("pk", flat=True))
    relations = Relation.objects.filter(kg=pool.sample.kg).count()
    assert QuestionTemplate.objects.filter(kg=pool.sample.kg, campaign__isnull=True).count() == relations
    assert (campaign.allowed_domains, campaign.assignment_timeout_s, campaign.gold_threshold, campaign.evidence_policy) == (
        ["en.wikipedia.org"], 600, 0.7, "never")  # normalised by the service
    assert Membership.objects.filter(campaign=campaign, user=root, role="admin").exists()
    page = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert 'name="pool"' not in page  # read-only once the items exist
