"""Security: source URLs are http(s) only, stored data is escaped on every page, and a ``javascript:`` URL (an
entity URL from an imported file, a source stored before validation) is never rendered as a link."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Item, Judgment, Role
from annotation.services.adjudication import next_adjudication
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from annotation.templatetags.safe_urls import http_url
from pooling.models import Entity
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('xss')</script>"
IMG = '<img src=x onerror="alert(1)">'
EVIL_URLS = ("javascript:alert(1)", "JavaScript:alert(document.cookie)", " javascript:alert(1)",
             "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "vbscript:msgbox(1)",
             "java\tscript:alert(1)", "//evil.example.org/x", "ftp://en.wikipedia.org/x")


def hrefs(html: str) -> list[str]:
    return re.findall(r"""href\s*=\s*["']?([^"' >]*)""", html, flags=re.I)


def assert_safe(html: str) -> None:
    for href in hrefs(html):
        assert not re.match(r"\s*(javascript|data|vbscript):", href, flags=re.I), href
    assert SCRIPT not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(" in html  # escaped, shown as text


@pytest.mark.parametrize("url", EVIL_URLS)
def test_the_link_filter_keeps_http_urls_only(url):
    assert http_url(url) == ""


def test_the_link_filter_keeps_http_and_https():
    assert http_url("https://en.wikipedia.org/wiki/X?a=1&b=2") == "https://en.wikipedia.org/wiki/X?a=1&b=2"
    assert http_url("http://example.org/") == "http://example.org/"


@pytest.mark.parametrize("url", EVIL_URLS + ("https://evil.example.org/x", "https://user:pw@en.wikipedia.org/x"))
def test_the_api_refuses_sources_that_are_not_allow_listed_http_links(tmp_path, url):
    campaign = nationality_campaign(tmp_path)
    user = member(campaign, "one", Role.ANNOTATOR)
    api = APIClient()
    api.force_login(user)
    handed = api.post(f"/api/campaigns/{campaign.name}/next-item/").json()
    hand_out = handed.get("hand_out")
    path = f"hand-outs/{hand_out}" if hand_out is not None else f"items/{handed['item']['id']}"
    response = api.post(f"/api/campaigns/{campaign.name}/{path}/judgment/",
                        {"answer": "Y", "source_url": url, "request_id": handed["request_id"]}, format="json")
    assert response.status_code == 400, (url, response.content)
    assert not Judgment.objects.exists()


def test_malicious_entity_data_and_stored_sources_are_escaped_and_never_links(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=1)
    kg = campaign.pool.sample.kg
    Entity.objects.filter(kg=kg, key="irons").update(
        name=f"Jeremy {IMG}", description=f"English actor {SCRIPT}", url="javascript:alert(1)", types=[SCRIPT])
    Entity.objects.filter(kg=kg, key="uk").update(url="JAVASCRIPT:alert(2)", description=SCRIPT)
    one = member(campaign, "one", Role.ANNOTATOR)
    two = member(campaign, "two", Role.ANNOTATOR)
    judge = member(campaign, "judge", Role.ADJUDICATOR)

    client = Client()
    client.force_login(one)
    hand_out = next_item(campaign, one)
    page = client.get(reverse("annotation:judge_item", args=[campaign.name, hand_out.pk]))
    assert page.status_code == 200
    assert_safe(page.content.decode())
    api = APIClient()
    api.force_login(one)
    payload = api.get(f"/api/campaigns/{campaign.name}/progress/")
    assert payload.status_code == 200 and payload["Content-Type"].startswith("application/json")

    # a conflict whose stored sources are hostile (stored before validation existed, or by hand in the admin)
    item = Item.objects.get(pk=hand_out.item_id)
    submit_judgment(item, one, "Y", "https://en.wikipedia.org/wiki/Jeremy_Irons")
    second = next_item(campaign, two)
    assert second.item_id == item.pk
    submit_judgment(item, two, "N", "https://en.wikipedia.org/wiki/Ireland", quote=SCRIPT)
    Judgment.objects.filter(user=one).update(source_url="javascript:alert(document.cookie)", quote=IMG)
    assert Item.objects.get(pk=item.pk).status == Item.Status.CONFLICT
    decision = next_adjudication(campaign, judge)
    assert decision is not None
    client.force_login(judge)
    page = client.get(reverse("annotation:adjudicate_item", args=[campaign.name, decision.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert_safe(html)
    assert "javascript:alert(document.cookie)" in html  # shown as text, not as a link

    # the manager's pages show the same data escaped
    admin = member(campaign, "boss", Role.ADMIN)
    client.force_login(admin)
    for name in ("manage", "manage_members", "manage_templates"):
        page = client.get(reverse(f"annotation:{name}", args=[campaign.name]))
        assert page.status_code == 200
        for href in hrefs(page.content.decode()):
            assert not href.lower().startswith("javascript:"), (name, href)
