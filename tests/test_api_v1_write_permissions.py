"""Who may write through /api/v1/ (issue 17; the permissions matrix checks one method per URL, this the writes):
creating KGs, systems, samples, pools, campaigns and evaluations is for staff; a campaign admin manages their own
campaign (settings, members) and reads the pooling objects of its KG, not of another KG; annotators manage
nothing. Nothing is written by a refused request."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign, Membership, Role
from evaluation.models import EvaluationRun
from pooling.models import KnowledgeGraph, Pool, Sample, System, Upload
from tests._annotation_support import star_campaign
from tests._annotation_web_support import member, nationality_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def client(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def counts() -> tuple:
    return (KnowledgeGraph.objects.count(), System.objects.count(), Sample.objects.count(), Pool.objects.count(),
            Campaign.objects.count(), EvaluationRun.objects.count(), Upload.objects.count(),
            Membership.objects.count())


def test_writes_by_role(storage, tmp_path):  # noqa: F811
    nat = nationality_campaign(tmp_path)
    other = star_campaign(tmp_path, items=3, name="other")
    annotator = client(member(nat, "ann", Role.ANNOTATOR))
    admin = client(member(nat, "nat-admin", Role.ADMIN))
    kg = nat.pool.sample.kg.name
    staff_only = [
        ("/api/v1/kgs/", {"name": "x"}),
        (f"/api/v1/kgs/{kg}/systems/", {"architecture": "transe", "epochs": 1}),
        (f"/api/v1/kgs/{kg}/systems/import/", {"kind": "run", "name": "r", "sample": "all"}),
        (f"/api/v1/kgs/{kg}/samples/", {"size": 1, "seed": 0}),
        ("/api/v1/pools/", {"kg": kg, "sample": "all", "systems": ["x"], "depth": 1}),
        ("/api/v1/campaigns/", {"name": "new", "pool": nat.pool_id}),
        ("/api/v1/evaluations/", {"kg": kg, "sample": "all"}),
    ]
    before = counts()
    for url, body in staff_only:
        for who, api in (("annotator", annotator), ("campaign admin", admin)):
            response = api.post(url, body, format="json")
            assert response.status_code == 403, (who, url, response.content)
    assert counts() == before

    # a campaign admin manages their campaign, not another one
    assert admin.patch("/api/v1/campaigns/nat/", {"gold_rate": 0.1, "judging_order": "depth"},
                       format="json").status_code == 200
    nat.refresh_from_db()
    assert (nat.gold_rate, nat.judging_order) == (0.1, "depth")
    assert admin.post("/api/v1/campaigns/nat/members/", {"username": "ann", "role": "adjudicator"},
                      format="json").status_code == 201
    assert Membership.objects.filter(campaign=nat, user__username="ann", role="adjudicator").exists()
    assert admin.delete("/api/v1/campaigns/nat/members/ann/adjudicator/").status_code == 200
    before = counts()
    for method, url in (("patch", "/api/v1/campaigns/other/"), ("post", "/api/v1/campaigns/other/members/"),
                        ("delete", f"/api/v1/campaigns/other/members/{other.name}/admin/")):
        for api in (admin, annotator):
            assert getattr(api, method)(url, {"username": "ann", "role": "annotator", "gold_rate": 0.5},
                                        format="json").status_code == 403, url
    for method, url in (("patch", "/api/v1/campaigns/nat/"), ("post", "/api/v1/campaigns/nat/members/")):
        assert getattr(annotator, method)(url, {"username": "ann", "role": "admin", "gold_rate": 0.5},
                                          format="json").status_code == 403
    assert counts() == before and Campaign.objects.get(name="other").gold_rate == 0.05

    # pooling reads: the admin sees their campaign's KG only
    assert [k["name"] for k in admin.get("/api/v1/kgs/").json()] == [kg]
    assert [p["id"] for p in admin.get("/api/v1/pools/").json()] == [nat.pool_id]
    assert admin.get(f"/api/v1/kgs/{other.pool.sample.kg.name}/").status_code == 403
    assert admin.get(f"/api/v1/pools/{other.pool_id}/entries/").status_code == 403
    assert annotator.get("/api/v1/kgs/").json() == [] and annotator.get("/api/v1/pools/").json() == []
