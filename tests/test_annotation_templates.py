"""Question templates: readable defaults, validation, rendering, campaign overrides and previews."""
from __future__ import annotations

import pytest

from annotation.lib.templates import TemplateError, check_template, default_template, render
from annotation.models import QuestionTemplate
from annotation.selectors.templates import item_question, template_preview, template_text
from annotation.services.campaigns import create_campaign
from annotation.services.errors import AnnotationError
from annotation.services.templates import reset_template, set_template
from tests._annotation_support import tiny_pool
from pooling.models import Relation


@pytest.mark.parametrize(
    ("key", "question"),
    [
        ("/people/person/nationality", "Is Jeremy Irons's nationality United Kingdom?"),
        ("/people/person/places_lived./people/place_lived/location", "Is United Kingdom the location in Jeremy Irons's places lived?"),
        ("/film/film/release_date_s./film/film_regional_release_date/film_release_region",
         "Is United Kingdom the film release region in Jeremy Irons's release date?"),
        ("/film/film/written_by", "Is Jeremy Irons written by United Kingdom?"),
        ("/location/location/contains", "Does Jeremy Irons contain United Kingdom?"),
        ("/tv/tv_program/languages", "Is United Kingdom one of Jeremy Irons's languages?"),
        ("/film/actor/film./film/performance/film", "Is United Kingdom a film of Jeremy Irons?"),
    ],
)
def test_defaults_read_well(key, question):
    assert render(default_template(key), "Jeremy Irons", "United Kingdom") == question


def test_defaults_without_a_path_use_the_text():
    assert default_template("P27", "country of citizenship") == "Is {head}'s country of citizenship {tail}?"
    assert default_template("_hypernym") == "Is {head}'s hypernym {tail}?"


def test_every_fb15k237_relation_gets_a_usable_default(shared_data):
    keys = [line.split("\t")[0] for line in (shared_data / "fb15k-237" / "relation_types.tsv").read_text().splitlines()]
    assert len(keys) == 237
    for key in keys:
        text = check_template(default_template(key))
        assert "_" not in text and "./" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("Is {head} ok?", "must contain {tail}"), ("Is {head} {x} {tail}?", "unknown placeholder"),
     ("Is {head {tail}?", "bad braces")],
)
def test_bad_templates(text, message):
    with pytest.raises(TemplateError, match=message):
        check_template(text)


@pytest.mark.django_db
def test_overrides_and_preview(tmp_path):
    pool = tiny_pool(tmp_path, name="nat", train=[("jeremy", "/people/person/nationality", "uk"), ("a", "/people/person/nationality", "b")],
                     test=[("c", "/people/person/nationality", "uk")], entries=[("jeremy", "/people/person/nationality", "b")])
    campaign = create_campaign("nat", pool)
    relation = Relation.objects.get(kg=pool.sample.kg)
    assert QuestionTemplate.objects.filter(relation=relation, campaign=None).count() == 1  # generated default
    assert template_text(relation, campaign) == "Is {head}'s nationality {tail}?"
    set_template(relation, "Does {head} hold {tail} citizenship?", campaign=campaign)
    item = campaign.items.get()
    assert item_question(item) == "Does jeremy hold b citizenship?"
    assert template_text(relation) == "Is {head}'s nationality {tail}?"  # KG default untouched
    with pytest.raises(AnnotationError, match="must contain"):
        set_template(relation, "Is {head} ok?", campaign=campaign)
    preview = template_preview(relation, "Is {tail} the country of {head}?", campaign=campaign, limit=2)
    assert [row.question for row in preview][0] == "Is b the country of jeremy?"  # pool entries first
    assert len(preview) == 2 and preview[1].question.startswith("Is ")
    reset_template(relation, campaign=campaign)
    assert item_question(item) == "Is jeremy's nationality b?"
