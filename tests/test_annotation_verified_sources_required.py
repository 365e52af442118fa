"""A campaign always has at least one verified source domain (issue 15: an empty list was accepted, and then no
source could be accepted, so nobody could judge): refused by the service, the manage page, the admin and the API."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Campaign
from annotation.services.campaigns import create_campaign, set_allowed_domains
from annotation.services.errors import AnnotationError
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db
KEPT = ["wikipedia.org", "wikidata.org", "imdb.com", "allmusic.com"]


def kept(campaign) -> list[str]:
    return Campaign.objects.get(pk=campaign.pk).allowed_domains


def test_service_refuses_an_empty_list(tmp_path):
    campaign = nationality_campaign(tmp_path)
    for empty in ([], ["", "  "]):
        with pytest.raises(AnnotationError, match="at least one verified source"):
            set_allowed_domains(campaign, empty)
    with pytest.raises(AnnotationError, match="at least one verified source"):
        create_campaign("other", campaign.pool, allowed_domains=[])
    assert kept(campaign) == KEPT and not Campaign.objects.filter(name="other").exists()


def test_manage_page_admin_and_api_refuse_it(tmp_path):
    campaign = nationality_campaign(tmp_path)
    client = Client()
    client.force_login(member(campaign, "boss", "admin"))
    page = client.post(reverse("annotation:manage_domains", args=[campaign.name]), {"domains": "  \n"})
    assert page.status_code == 400 and "at least one verified source" in page.content.decode()

    root = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    admin_page = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/")
    form = admin_page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "pool"}
    data.update({"allowed_domains": "[]", "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
                 "templates-TOTAL_FORMS": "0", "templates-INITIAL_FORMS": "0"})
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/change/", data)
    assert response.status_code == 200 and "at least one verified source" in response.content.decode()

    api = APIClient()
    api.force_authenticate(root)
    answer = api.patch(f"/api/v1/campaigns/{campaign.name}/", {"allowed_domains": []}, format="json")
    assert answer.status_code == 400 and "at least one verified source" in answer.content.decode()
    assert kept(campaign) == KEPT
