"""Pasting a full URL into the prefilled source field (headless Chromium) replaces the prefill instead of
appending to it, so the doubled URL of issue 15 (``…/wiki/https://en.wikipedia.org/wiki/…``) is never sent."""
from __future__ import annotations

import pytest

from annotation.models import Judgment
from tests._annotation_web_support import member, nationality_campaign
from tests.test_annotation_browser_judging import browser, judge_by_keyboard, login, pytestmark  # noqa: F401

PASTED = "https://en.wikipedia.org/wiki/United_States"


@pytest.mark.django_db(transaction=True)
def test_a_pasted_url_replaces_the_prefilled_site(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=2)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    judge_by_keyboard(page, "y", "https://en.wikipedia.org/wiki/Jeremy_Irons")
    page.wait_for_selector("#judge-form")
    assert page.input_value("input[name=source_url]") == ""  # nothing sent unless the person goes to the field
    page.evaluate("text => navigator.clipboard.writeText(text)", PASTED)
    page.keyboard.press("n")
    page.keyboard.press("f")  # the prefill is written in, the caret lands after it
    assert page.input_value("input[name=source_url]") == "https://en.wikipedia.org/wiki/"
    page.keyboard.press("Control+v")
    assert page.input_value("input[name=source_url]") == PASTED
    with page.expect_navigation():
        page.keyboard.press("Enter")
    context.close()
    assert sorted(Judgment.objects.filter(user=one).values_list("source_url", flat=True)) == [
        "https://en.wikipedia.org/wiki/Jeremy_Irons", PASTED]


@pytest.mark.django_db(transaction=True)
def test_an_obvious_no_is_one_key_and_enter_with_no_source_sent(tmp_path, live_server, browser):  # noqa: F811
    """Evidence policy "yes" (the default): after a first answer with a source, N + Enter saves a No without a
    source; the site start offered for the field is not stored as one. A Yes without a source is refused."""
    campaign = nationality_campaign(tmp_path, entries=3)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    judge_by_keyboard(page, "y", "https://en.wikipedia.org/wiki/Jeremy_Irons")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("n")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("f")
    page.keyboard.press("Escape")  # went to the field and left it: the offered start alone is no source
    page.keyboard.press("y")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "a source URL is required" in page.inner_text("body")
    context.close()
    assert sorted(Judgment.objects.filter(user=one).values_list("answer", "source_url")) == [
        ("N", ""), ("Y", "https://en.wikipedia.org/wiki/Jeremy_Irons")]
