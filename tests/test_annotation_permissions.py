"""Who may see and do what on the judging pages and API: anonymous users, annotators (not another's item,
not the admin pages, never another's answer), adjudicators who judged, CSRF on form posts."""
from __future__ import annotations

import json

import pytest
from django.http import HttpRequest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, Judgment
from tests._annotation_web_support import PASSWORD, member, nationality_campaign

pytestmark = pytest.mark.django_db

SECRET_SOURCE = "https://en.wikipedia.org/wiki/Secret_source_of_one"


def handed(client, campaign) -> int:
    """The hand-out id of the next item (pages address work by hand-out, never by item pk)."""
    response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
    assert response.status_code == 302
    return int(response.url.rstrip("/").split("/")[-1])


def item_of(hand_out: int) -> int:
    return Assignment.objects.get(pk=hand_out).item_id


def judge(client, campaign, hand_out, answer="Y", source=SECRET_SOURCE):
    page = client.get(reverse("annotation:judge_item", args=[campaign.name, hand_out]))
    data = {"answer": answer, "source_url": source, "quote": "secret quote of one",
            "request_id": page.context["form"].initial["request_id"]}
    assert client.post(reverse("annotation:judge_item", args=[campaign.name, hand_out]), data).status_code == 302


def manage_urls(name: str) -> list[str]:
    return [reverse(f"annotation:{view}", args=[name]) for view in (
        "manage", "manage_members", "manage_domains", "manage_filter", "manage_templates", "manage_agreement",
        "manage_template_preview")] + [reverse("annotation:manage_export", args=[name, "labels"])]


def test_anonymous_is_sent_to_login_and_refused_by_the_api(tmp_path):
    campaign = nationality_campaign(tmp_path)
    client = Client()
    for url in [reverse("annotation:campaigns"), reverse("annotation:judge_next", args=[campaign.name]),
                reverse("annotation:judge_item", args=[campaign.name, 1]),
                reverse("annotation:adjudicate_next", args=[campaign.name]), *manage_urls(campaign.name)]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/"), url
    api = APIClient()
    for method, url in (("get", "/api/campaigns/"), ("post", f"/api/campaigns/{campaign.name}/next-item/"),
                        ("post", f"/api/campaigns/{campaign.name}/hand-outs/1/judgment/"),
                        ("get", f"/api/campaigns/{campaign.name}/progress/")):
        assert getattr(api, method)(url).status_code in (401, 403), url


def test_annotator_cannot_open_anothers_item_or_the_admin_pages(tmp_path):
    campaign = nationality_campaign(tmp_path)
    one, two = member(campaign, "one", "annotator"), member(campaign, "two", "annotator")
    c1, c2 = Client(), Client()
    c1.force_login(one)
    c2.force_login(two)
    hand_out = handed(c1, campaign)
    for url in (reverse("annotation:judge_item", args=[campaign.name, hand_out]),):
        assert c2.get(url).status_code == 403
    assert c2.get(reverse("annotation:judge_item", args=[campaign.name, hand_out + 1000])).status_code == 404
    post = c2.post(reverse("annotation:judge_item", args=[campaign.name, hand_out]),
                   {"answer": "N", "source_url": "https://en.wikipedia.org/wiki/X", "request_id": "x"})
    assert post.status_code == 403 and not Judgment.objects.filter(user=two).exists()
    assert c2.post(reverse("annotation:judge_skip", args=[campaign.name, hand_out])).status_code == 403
    for url in manage_urls(campaign.name):
        assert c1.get(url).status_code == 403, url
    assert c1.post(reverse("annotation:manage_filter_apply", args=[campaign.name]), {"rules": ["type"]}).status_code == 403
    assert c1.post(reverse("annotation:manage_members", args=[campaign.name]),
                   {"username": "one", "role": "admin"}).status_code == 403
    # not an adjudicator: no adjudication pages
    assert c1.get(reverse("annotation:adjudicate_next", args=[campaign.name])).status_code == 403
    # not a member at all
    stranger = member(nationality_campaign(tmp_path, name="elsewhere"), "stranger", "annotator")
    c3 = Client()
    c3.force_login(stranger)
    assert c3.get(reverse("annotation:campaign", args=[campaign.name])).status_code == 403
    assert c3.get(reverse("annotation:judge_next", args=[campaign.name])).status_code == 403


def test_no_page_or_json_shows_another_annotators_answer(tmp_path):
    campaign = nationality_campaign(tmp_path, entries=1)
    one, two = member(campaign, "one", "annotator"), member(campaign, "two", "annotator", "adjudicator")
    c1, c2 = Client(), Client()
    c1.force_login(one)
    c2.force_login(two)
    first = handed(c1, campaign)
    judge(c1, campaign, first)
    second = handed(c2, campaign)
    item_id = item_of(first)
    assert item_of(second) == item_id and second != first  # the second judge gets the same item, own hand-out ...
    page = c2.get(reverse("annotation:judge_item", args=[campaign.name, second])).content.decode()
    assert "Secret_source_of_one" not in page and "secret quote" not in page  # ... but not the first answer
    api = APIClient()
    api.force_login(two)
    payloads = [api.post(f"/api/campaigns/{campaign.name}/next-item/").json(),
                api.get(f"/api/campaigns/{campaign.name}/hand-outs/{second}/").json(),
                api.get("/api/campaigns/").json(), api.get(f"/api/campaigns/{campaign.name}/progress/").json()]
    for payload in payloads:
        dumped = json.dumps(payload)
        assert "Secret_source_of_one" not in dumped and "secret quote" not in dumped
    assert api.get(f"/api/campaigns/{campaign.name}/hand-outs/{first}/").status_code == 403  # one's hand-out
    # two disagrees -> conflict; two judged it, so two never gets to adjudicate it
    judge(c2, campaign, second, answer="N", source="https://en.wikipedia.org/wiki/Other")
    assert Item.objects.get(pk=item_id).status == Item.Status.CONFLICT
    done = c2.get(reverse("annotation:adjudicate_next", args=[campaign.name]))
    assert done.status_code == 200 and "No conflict for you to adjudicate" in done.content.decode()
    # no adjudication hand-out of two's: neither the page nor a post reaches the item
    for hand_out in (first, second):
        assert c2.get(reverse("annotation:adjudicate_item", args=[campaign.name, hand_out])).status_code == 404
        assert c2.post(reverse("annotation:adjudicate_item", args=[campaign.name, hand_out]),
                       {"label": "N", "reason": "mine"}).status_code == 404
    assert api.post(f"/api/campaigns/{campaign.name}/next-adjudication/").json()["item"] is None
    assert Item.objects.get(pk=item_id).status == Item.Status.CONFLICT


def test_csrf_is_enforced_on_form_posts(tmp_path):
    campaign = nationality_campaign(tmp_path)
    member(campaign, "one", "annotator")
    client = Client(enforce_csrf_checks=True)
    # a real password login (django-axes, the login rate limit, wants the request)
    assert client.login(request=HttpRequest(), username="one", password=PASSWORD)
    hand_out = handed(client, campaign)
    url = reverse("annotation:judge_item", args=[campaign.name, hand_out])
    page = client.get(url)
    data = {"answer": "Y", "source_url": SECRET_SOURCE, "request_id": page.context["form"].initial["request_id"]}
    assert client.post(url, data).status_code == 403
    assert client.post(reverse("annotation:judge_skip", args=[campaign.name, hand_out])).status_code == 403
    assert not Judgment.objects.exists()
    data["csrfmiddlewaretoken"] = page.context["csrf_token"]
    assert client.post(url, data).status_code == 302
    assert Judgment.objects.count() == 1
