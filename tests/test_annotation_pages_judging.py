"""Judging pages with the Django test client: judge by form post, idempotent resubmit, inline source error,
skip, conflict -> adjudication, campaign list."""
from __future__ import annotations

import html

import pytest
from django.urls import reverse

from annotation.models import Assignment, Item, Judgment, Label
from tests._annotation_web_support import nationality_campaign, member

pytestmark = pytest.mark.django_db

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


def text(response) -> str:
    return html.unescape(response.content.decode())


def take_item(client, campaign) -> Item:
    """The item handed out next, with ``hand_out``: the id the pages address it by (never the item pk)."""
    response = client.get(reverse("annotation:judge_next", args=[campaign.name]))
    assert response.status_code == 302, response.content[:500]
    hand_out = int(response.url.rstrip("/").split("/")[-1])
    item = Assignment.objects.select_related("item__tail").get(pk=hand_out).item
    item.hand_out = hand_out
    return item


def form_data(client, campaign, item, **values) -> dict:
    page = client.get(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]))
    assert page.status_code == 200
    data = {"answer": "Y", "source_url": WIKI, "quote": "", "time_on_task_ms": "4200",
            "request_id": page.context["form"].initial["request_id"]}
    data.update(values)
    return data


def test_campaign_list_shows_only_my_campaigns_with_role(tmp_path, client):
    mine = nationality_campaign(tmp_path, name="mine")
    other = nationality_campaign(tmp_path, name="other")
    user = member(mine, "ann", "annotator")
    member(other, "someone", "annotator")
    client.force_login(user)
    page = text(client.get(reverse("annotation:campaigns")))
    assert "mine" in page and "annotator" in page
    assert "/campaigns/other/" not in page
    home = text(client.get("/"))
    assert "/campaigns/mine/" in home and "/campaigns/other/" not in home


def test_judging_page_shows_question_entities_origin_and_records_a_judgment(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    page = client.get(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]))
    body = text(page)
    assert f"Is Jeremy Irons's nationality {item.tail.name}?" in body
    assert "English actor" in body and "/film/actor" in body and WIKI in body  # head: description, types, link
    assert item.tail.url in body
    assert "(Jeremy Irons, /people/person/nationality, Ireland)" in body  # the sampled test triple behind it
    assert 'name="request_id"' in body and 'name="time_on_task_ms"' in body
    data = form_data(client, campaign, item, quote="Irons is an English actor")
    response = client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), data)
    assert response.status_code == 302 and response.url == reverse("annotation:judge_next", args=[campaign.name])
    judgment = Judgment.objects.get(item=item, user=annotator)
    assert (judgment.answer, judgment.source_url, judgment.quote) == (Label.YES, WIKI, "Irons is an English actor")
    assert judgment.client_time_ms == min(4200, judgment.time_on_task_ms)  # the page's figure: a hint, clamped
    # the next page offers the last source's site (written in when the person goes to the field) and shows the
    # progress; the field itself starts empty, so an answer without a source sends none
    nxt = take_item(client, campaign)
    page = client.get(reverse("annotation:judge_item", args=[campaign.name, nxt.hand_out]))
    assert 'data-prefill="https://en.wikipedia.org/wiki/"' in text(page)
    assert not page.context["form"].initial.get("source_url")
    assert "1 judged" in text(page)


def test_double_submit_records_one_judgment(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    data = form_data(client, campaign, item)
    url = reverse("annotation:judge_item", args=[campaign.name, item.hand_out])
    first = client.post(url, data)
    second = client.post(url, data)
    assert first.status_code == second.status_code == 302
    assert Judgment.objects.filter(user=annotator).count() == 1
    assert Item.objects.get(pk=item.pk).num_judgments == 1


def test_another_answer_from_a_second_tab_is_not_saved_and_says_so(tmp_path, client):
    """Two tabs of one hand-out share its request id: the second, different answer is no retry of the first. It
    is refused with the answer kept, not answered "Saved." (found from outside)."""
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    first_tab = form_data(client, campaign, item, answer="N")
    second_tab = form_data(client, campaign, item, answer="Y")
    assert first_tab["request_id"] == second_tab["request_id"]
    url = reverse("annotation:judge_item", args=[campaign.name, item.hand_out])
    assert [str(m) for m in client.post(url, first_tab, follow=True).context["messages"]] == ["Saved."]
    after = client.post(url, second_tab, follow=True)
    shown = [str(m) for m in after.context["messages"]]
    assert shown == ["Not saved: you had already answered this item (no), perhaps in another tab. That answer is "
                     "kept; undo it under My answers to change it."]
    assert list(Judgment.objects.filter(user=annotator).values_list("answer", flat=True)) == [Label.NO]
    assert [str(m) for m in client.post(url, first_tab, follow=True).context["messages"]] == ["Saved."]  # a retry
    assert Judgment.objects.filter(user=annotator).count() == 1


def test_a_blank_can_t_tell_comment_is_the_comment_field_s_error(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "ann", "annotator"))
    item = take_item(client, campaign)
    data = form_data(client, campaign, item, answer="C", source_url="", quote="   ")
    response = client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), data)
    assert response.status_code == 400
    assert response.context["form"].errors == {"quote": ["say why you can't tell: a comment is required with \"can't tell\""]}
    body = text(response)
    assert 'data-autofocus-error="comment"' in body and 'aria-describedby="quote-errors"' in body
    assert not Judgment.objects.exists()


def test_bad_source_shows_inline_error_and_keeps_the_entered_data(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    data = form_data(client, campaign, item, answer="N", source_url="https://www.example.com/irons",
                     quote="a quote I typed")
    response = client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), data)
    assert response.status_code == 400
    body = text(response)
    assert "www.example.com is not a verified source of this campaign" in body
    assert 'value="https://www.example.com/irons"' in body and 'value="a quote I typed"' in body
    assert 'value="N" required checked' in body
    assert f'value="{data["request_id"]}"' in body and 'value="4200"' in body
    assert not Judgment.objects.exists()
    # fixing the source saves it
    data["source_url"] = WIKI
    assert client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), data).status_code == 302
    assert Judgment.objects.get().answer == Label.NO


def test_skip_gives_the_item_back_and_never_again(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    url = reverse("annotation:judge_skip", args=[campaign.name, item.hand_out])
    assert client.post(url).status_code == 302
    assert client.post(url).status_code == 302  # a double click does no harm
    assert Assignment.objects.get(item=item, user=annotator).state == Assignment.State.SKIPPED
    assert take_item(client, campaign).pk != item.pk


def test_nothing_left_page(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=1)
    annotator = member(campaign, "ann", "annotator")
    client.force_login(annotator)
    item = take_item(client, campaign)
    client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), form_data(client, campaign, item))
    page = client.get(reverse("annotation:judge_next", args=[campaign.name]))
    assert page.status_code == 200 and "Nothing left for you to judge" in text(page)


def test_conflict_is_adjudicated_on_the_page(tmp_path, client):
    campaign = nationality_campaign(tmp_path, entries=1)
    one, two = member(campaign, "one", "annotator"), member(campaign, "two", "annotator")
    judge = member(campaign, "judge", "adjudicator")
    for user, answer, source in ((one, "Y", WIKI), (two, "N", "https://www.imdb.com/name/nm0000460/")):
        client.force_login(user)
        item = take_item(client, campaign)
        data = form_data(client, campaign, item, answer=answer, source_url=source, quote=f"quote of {user.username}")
        assert client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]), data).status_code == 302
    item.refresh_from_db()
    assert item.status == Item.Status.CONFLICT
    client.force_login(judge)
    response = client.get(reverse("annotation:adjudicate_next", args=[campaign.name]))
    assert response.status_code == 302
    page = client.get(response.url)
    body = text(page)
    assert page.status_code == 200
    assert WIKI in body and "https://www.imdb.com/name/nm0000460/" in body
    assert "quote of one" in body and "quote of two" in body and "Annotator A" in body and "Annotator B" in body
    # a reason is required; the error is shown and nothing is decided
    bad = client.post(response.url, {"label": "N", "reason": ""})
    assert bad.status_code == 400 and Item.objects.get(pk=item.pk).status == Item.Status.CONFLICT
    done = client.post(response.url, {"label": "N", "reason": "IMDb lists only British nationality"})
    assert done.status_code == 302
    item.refresh_from_db()
    assert (item.status, item.label, item.label_origin) == (Item.Status.ADJUDICATED, Label.NO, Item.Origin.ADJUDICATED)
    assert item.adjudication.reason == "IMDb lists only British nationality"
