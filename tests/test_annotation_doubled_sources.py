"""Doubled source URLs (issue 15): a URL pasted after the prefilled site start is refused on the judge page and
in the API with a clear message, nothing stored; ``check_sources`` lists the ones stored before, and ``--repair``
replaces them by the pasted URL as an admin edit (the doubled URL stays in the label history)."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Judgment, LabelVersion
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member, nationality_campaign
from tests.test_annotation_api_judging import api, submit
from tests.test_annotation_api_judging import next_item as api_next_item
from tests.test_annotation_pages_judging import form_data, take_item, text

pytestmark = pytest.mark.django_db

MEANT = "https://en.wikipedia.org/wiki/Jeremy_Irons"
DOUBLED = "https://en.wikipedia.org/wiki/" + MEANT


def test_judge_page_refuses_a_doubled_url_and_stores_nothing(tmp_path, client):
    campaign = nationality_campaign(tmp_path)
    client.force_login(member(campaign, "ann", "annotator"))
    item = take_item(client, campaign)
    response = client.post(reverse("annotation:judge_item", args=[campaign.name, item.hand_out]),
                           form_data(client, campaign, item, source_url=DOUBLED))
    assert response.status_code == 400  # the form again, with the error on the source field
    assert "contains a second http(s)://" in text(response)
    assert not Judgment.objects.exists()


def test_api_refuses_a_doubled_url(tmp_path):
    campaign = nationality_campaign(tmp_path)
    client = api(member(campaign, "ann", "annotator"))
    response = submit(client, campaign, api_next_item(client, campaign), source_url=DOUBLED)
    assert response.status_code == 400
    assert "second http(s)://" in response.content.decode()
    assert not Judgment.objects.exists()


def stored_doubled(campaign, user, url: str = DOUBLED) -> Judgment:
    """A judgment stored before the check existed: saved through the service, then given a doubled URL."""
    judgment = submit_judgment(next_item(campaign, user).item, user, "Y", MEANT)
    Judgment.objects.filter(pk=judgment.pk).update(source_url=url)
    return judgment


def test_check_sources_lists_then_repairs_as_a_new_version(tmp_path):
    campaign = nationality_campaign(tmp_path)
    ann = member(campaign, "ann", "annotator")
    doubled = stored_doubled(campaign, ann)
    clean = submit_judgment(next_item(campaign, ann).item, ann, "N", "https://www.imdb.com/name/nm0000460/")
    out = io.StringIO()
    call_command("check_sources", stdout=out)
    assert out.getvalue().startswith("1 judgment(s) with a doubled source URL")
    assert f"judgment {doubled.pk} by ann: {DOUBLED} -> {MEANT}" in out.getvalue()
    assert Judgment.objects.get(pk=doubled.pk).source_url == DOUBLED  # listing changes nothing

    out = io.StringIO()
    call_command("check_sources", campaign.name, "--repair", stdout=out)
    assert "repaired 1, left 0" in out.getvalue()
    assert Judgment.objects.get(pk=doubled.pk).source_url == MEANT
    assert Judgment.objects.get(pk=clean.pk).source_url == clean.source_url
    edit = LabelVersion.objects.get(judgment=doubled, reason=LabelVersion.Reason.ADMIN_EDIT)
    assert (edit.old_source_url, edit.new_source_url, edit.changed_by_id) == (DOUBLED, MEANT, None)
    assert "doubled source URL" in edit.note
    assert LabelVersion.objects.filter(judgment=doubled).count() == 2  # the submit version is kept

    out = io.StringIO()
    call_command("check_sources", stdout=out)
    assert out.getvalue().startswith("0 judgment(s)")


def test_repair_leaves_an_inner_url_off_the_verified_domains_and_says_so(tmp_path):
    campaign = nationality_campaign(tmp_path)
    ann = member(campaign, "ann", "annotator")
    url = "https://en.wikipedia.org/wiki/https://example.com/irons"
    judgment = stored_doubled(campaign, ann, url)
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 doubled source URL"):
        call_command("check_sources", "--repair", "--by", "ann", stdout=out)
    assert f"left judgment {judgment.pk}: example.com is not a verified source" in out.getvalue()
    assert Judgment.objects.get(pk=judgment.pk).source_url == url
    assert not LabelVersion.objects.filter(reason=LabelVersion.Reason.ADMIN_EDIT).exists()
