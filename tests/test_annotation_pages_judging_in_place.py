"""Saving in place (issue 15, no page load between items), the server's side with the Django test client: a save
sent by judge.js (header X-Kgpool-In-Place) is answered with the next page itself, its address in Content-Location,
and that page is the one a full page load of the address shows (the same markup, so nothing more is shown to the
annotator); errors come back as the same item's page; without the header the pages redirect as before."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, Judgment, Label
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"
IN_PLACE = {"HTTP_X_KGPOOL_IN_PLACE": "1"}


def hand_out_of(client, campaign) -> int:
    response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
    assert response.status_code == 302
    return int(response.url.rstrip("/").split("/")[-1])


def answer(hand_out: int, value: str, source: str = WIKI) -> dict:
    return {"answer": value, "source_url": source, "quote": "", "time_on_task_ms": "1500",
            "request_id": f"assignment-{hand_out}"}


def main_part(response) -> str:
    """The page's <main>, without what differs between two renderings of one page: the CSRF token, the
    messages of the request before, the hand-out's remaining time."""
    body = response.content.decode()
    main = body[body.index("<main>"):body.index("</main>")]
    main = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", main)
    main = re.sub(r'<ul class="messages">.*?</ul>', "", main, flags=re.S)
    return re.sub(r"Hand-out expires .*? from now", "", main)


def test_a_save_in_place_answers_with_the_next_page_as_a_page_load_shows_it(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=3)
    one = member(campaign, "one", "annotator")
    client.force_login(one)
    first = hand_out_of(client, campaign)
    url = reverse("annotation:judge_item", args=[campaign.name, first])

    response = client.post(url, answer(first, "Y"), **IN_PLACE)
    assert response.status_code == 200
    second = Assignment.objects.get(user=one, state=Assignment.State.OPEN).pk
    assert second != first
    assert response["Content-Location"] == reverse("annotation:judge_item", args=[campaign.name, second])
    assert "Saved." in response.content.decode()
    assert f'action="{response["Content-Location"]}"' in response.content.decode()
    assert Judgment.objects.get(assignment_id=first).answer == Label.YES
    loaded = client.get(response["Content-Location"])  # the same page by a full load of its address
    assert loaded.status_code == 200
    assert main_part(response) == main_part(loaded)


def test_an_error_in_place_is_the_same_items_page_and_the_last_save_the_done_page(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=1)
    one = member(campaign, "one", "annotator")
    client.force_login(one)
    only = hand_out_of(client, campaign)
    url = reverse("annotation:judge_item", args=[campaign.name, only])

    refused = client.post(url, answer(only, "Y", "https://example.com/irons"), **IN_PLACE)
    assert refused.status_code == 400
    assert "not a verified source" in refused.content.decode()
    assert 'data-autofocus-error="source"' in refused.content.decode()  # judge.js focuses the source field
    assert not Judgment.objects.exists()

    done = client.post(url, answer(only, "N", ""), **IN_PLACE)
    assert done.status_code == 200
    assert done["Content-Location"] == reverse("annotation:judge_next", args=[campaign.name])
    assert "Nothing left for you to judge" in done.content.decode()
    assert Judgment.objects.get(user=one).answer == Label.NO


def test_without_the_header_a_save_redirects_and_a_skip_in_place_shows_the_next_item(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=2)
    one = member(campaign, "one", "annotator")
    client.force_login(one)
    first = hand_out_of(client, campaign)
    saved = client.post(reverse("annotation:judge_item", args=[campaign.name, first]), answer(first, "N"))
    assert saved.status_code == 302 and saved.url == reverse("annotation:judge_next", args=[campaign.name])
    second = hand_out_of(client, campaign)
    skipped = client.post(reverse("annotation:judge_skip", args=[campaign.name, second]), {}, **IN_PLACE)
    assert skipped.status_code == 200
    assert skipped["Content-Location"] == reverse("annotation:judge_next", args=[campaign.name])
    assert Assignment.objects.get(pk=second).state == Assignment.State.SKIPPED


def test_an_adjudication_in_place_answers_with_the_next_conflict_or_the_done_page(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=2)
    for name, value in (("one", "Y"), ("two", "N"), ("one", "N"), ("two", "Y")):
        user = member(campaign, name, "annotator")
        submit_judgment(next_item(campaign, user).item, user, value, WIKI)
    boss = member(campaign, "boss", "adjudicator")
    client.force_login(boss)
    response = client.get(reverse("annotation:adjudicate_next", args=[campaign.name]))
    first = int(response.url.rstrip("/").split("/")[-1])
    decision = {"label": "Y", "reason": "the page says so"}

    response = client.post(reverse("annotation:adjudicate_item", args=[campaign.name, first]), decision, **IN_PLACE)
    assert response.status_code == 200
    second = Assignment.objects.get(user=boss, kind=Assignment.Kind.ADJUDICATE, state=Assignment.State.OPEN).pk
    assert response["Content-Location"] == reverse("annotation:adjudicate_item", args=[campaign.name, second])
    assert main_part(response) == main_part(client.get(response["Content-Location"]))

    response = client.post(reverse("annotation:adjudicate_item", args=[campaign.name, second]), decision, **IN_PLACE)
    assert response["Content-Location"] == reverse("annotation:adjudicate_next", args=[campaign.name])
    assert "No conflict for you to adjudicate" in response.content.decode()


def test_the_next_page_prepared_while_reading_is_used_and_a_wrong_guess_is_harmless(tmp_path, client):
    from django.db import connection

    from annotation.models import Item
    from annotation.selectors.next_page import likely_next_item

    campaign = star_campaign(tmp_path, items=5)
    one = member(campaign, "one", "annotator")
    client.force_login(one)

    def save(hand_out: int, meanwhile=lambda: None):
        prepared = client.get(reverse("annotation:judge_prepare_next", args=[campaign.name, hand_out]))
        assert prepared.status_code == 204 and prepared.content == b""  # nothing of the next item is sent
        meanwhile()
        queries = []

        def count(execute, sql, params, many, context):
            queries.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            response = client.post(reverse("annotation:judge_item", args=[campaign.name, hand_out]),
                                   answer(hand_out, "N", ""), **IN_PLACE)
        assert response.status_code == 200
        assert main_part(response) == main_part(client.get(response["Content-Location"]))
        return response, len(queries)

    first = hand_out_of(client, campaign)
    guessed = likely_next_item(campaign, one)
    response, prepared_queries = save(first)
    second = Assignment.objects.get(user=one, state=Assignment.State.OPEN)
    assert second.item_id == guessed.pk  # one annotator alone: the guess is the hand-out

    def rule_takes_the_guess():
        Item.objects.filter(pk=likely_next_item(campaign, one).pk).update(status=Item.Status.AUTO_NEGATIVE)

    response, unprepared_queries = save(second.pk, rule_takes_the_guess)  # the guess went meanwhile
    third = Assignment.objects.get(user=one, state=Assignment.State.OPEN)
    assert Item.objects.get(pk=third.item_id).status == Item.Status.IN_PROGRESS
    assert prepared_queries < unprepared_queries  # the item's view and KG context came prepared
    assert Judgment.objects.filter(user=one).count() == 2
