"""Question templates take plain {head}, {tail}, {relation} only (issue 13, item 3): the attacks of the review
(a nested format spec that made every judging page answer 500, a width spec that made the preview answer
100 MB) are refused on save with a clear error, and a bad template already stored never breaks a page."""
from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.forms import QuestionTemplateAdminForm
from annotation.lib.templates import MAX_QUESTION_LENGTH, TemplateError, check_template, render
from annotation.models import Item, QuestionTemplate
from annotation.services.errors import AnnotationError
from annotation.services.templates import set_template
from pooling.models import Entity
from tests._annotation_web_support import member, nationality_campaign

NESTED = "Is {head:{tail}} {tail}?"
WIDE = "{head:>20000000}{tail}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (NESTED, "bad braces"),
        (WIDE, "not a plain placeholder"),
        ("Is {head!r} {tail}?", "not a plain placeholder"),
        ("Is {head.__class__} {tail}?", "not a plain placeholder"),
        ("Is {head[0]} {tail}?", "not a plain placeholder"),
        ("Is {head:} {tail}?", "not a plain placeholder"),
        ("Is {} {head} {tail}?", "unknown placeholder"),
        ("Is {0} {head} {tail}?", "unknown placeholder"),
        ("Is {campaign} {head} {tail}?", "unknown placeholder"),
        ("Is {head} } {tail}?", "bad braces"),
        ("{head} {tail} " + "x" * 500, "at most 500"),
        ("{head}{tail}" * 4, "at most 6"),
    ],
)
def test_anything_but_plain_placeholders_is_refused(text, message):
    with pytest.raises(TemplateError, match=message):
        check_template(text)


def test_plain_placeholders_and_literal_braces_render_without_str_format():
    assert render("Is {head} {relation} {tail}? {{not {head}}}", "A", "B", "likes") == "Is A likes B? {not A}"
    # a name is text, never a template: braces and format specs in it are kept as they are
    assert render("Is {head} {tail}?", "{tail:>99}", "B") == "Is {tail:>99} B?"


def test_the_rendered_question_is_bounded_whatever_the_names():
    long_name = "N" * 50_000
    question = render("{head} {tail} {head} {tail} {head} {relation}", long_name, long_name, long_name)
    assert len(question) <= MAX_QUESTION_LENGTH < 2000


@pytest.mark.django_db
def test_bad_templates_are_refused_on_save_by_page_service_and_admin(tmp_path):
    campaign = nationality_campaign(tmp_path)
    relation = Item.objects.filter(campaign=campaign).first().relation
    client = Client()
    client.force_login(member(campaign, "boss", "admin"))
    url = reverse("annotation:manage_templates", args=[campaign.name])
    response = client.post(url, {"relation": relation.pk, "text": NESTED})
    assert response.status_code == 400 and "bad braces" in html.unescape(response.content.decode())
    with pytest.raises(AnnotationError, match="not a plain placeholder"):
        set_template(relation, WIDE, campaign=campaign)
    assert not QuestionTemplate.objects.filter(campaign=campaign).exists()
    assert QuestionTemplateAdminForm(data={"kg": relation.kg_id, "relation": relation.pk, "campaign": campaign.pk,
                                           "text": "Is {tail} {head}'s {relation}?"}).is_valid()
    # the Django admin uses the same check
    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("root", password="root-pw-123"))
    added = staff.post(reverse("admin:annotation_questiontemplate_add"),
                       {"kg": relation.kg_id, "relation": relation.pk, "campaign": campaign.pk, "text": NESTED})
    assert added.status_code == 200 and "bad braces" in html.unescape(added.content.decode())
    assert not QuestionTemplate.objects.filter(campaign=campaign).exists()


@pytest.mark.django_db
def test_the_preview_refuses_a_width_spec_with_a_small_answer(tmp_path):
    campaign = nationality_campaign(tmp_path)
    relation = Item.objects.filter(campaign=campaign).first().relation
    Entity.objects.filter(kg=relation.kg).update(name="E" * 500)  # the longest names are cut, not copied whole
    client = Client()
    client.force_login(member(campaign, "boss", "admin"))
    url = reverse("annotation:manage_template_preview", args=[campaign.name])
    bad = client.get(url, {"relation": relation.pk, "text": WIDE})
    assert bad.status_code == 400 and "not a plain placeholder" in bad.json()["error"]
    assert len(bad.content) < 1000
    good = client.get(url, {"relation": relation.pk, "text": "{head} {head} {head} {tail} {tail} {tail}"})
    assert good.status_code == 200 and good.json()["rows"]
    assert len(good.content) < 5 * 2 * MAX_QUESTION_LENGTH


@pytest.mark.django_db
@pytest.mark.parametrize("bad", [NESTED, WIDE, "Is {head} {nope}?"])
def test_a_bad_template_already_stored_falls_back_to_the_default_and_says_so(tmp_path, bad):
    campaign = nationality_campaign(tmp_path)
    relation = Item.objects.filter(campaign=campaign).first().relation
    # stored before the strict check existed (written around the services)
    QuestionTemplate.objects.create(kg=relation.kg, relation=relation, campaign=campaign, text=bad, is_generated=False)
    annotator = member(campaign, "ann", "annotator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    handout = api.post(f"/api/campaigns/{campaign.name}/next-item/")
    assert handout.status_code == 200
    question = handout.json()["item"]["question"]
    assert question.startswith("Is Jeremy Irons's nationality ") and len(question) < 200  # the generated default
    pages = Client()
    pages.force_login(annotator)
    page = pages.get(reverse("annotation:judge_item", args=[campaign.name, handout.json()["hand_out"]]))
    assert page.status_code == 200 and question in html.unescape(page.content.decode())
    manager = Client()
    manager.force_login(member(campaign, "boss", "admin"))
    listing = html.unescape(manager.get(reverse("annotation:manage_templates", args=[campaign.name])).content.decode())
    assert "The saved template cannot be used" in listing and "Is {head}'s nationality {tail}?" in listing
