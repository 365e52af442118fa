"""Pasting a full URL into the prefilled source field (headless Chromium) replaces the prefill instead of
appending to it, so the doubled URL of issue 15 (``…/wiki/https://en.wikipedia.org/wiki/…``) is never sent."""
from __future__ import annotations

import pytest

from annotation.models import Item, Judgment
from tests._annotation_web_support import member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, judge_by_keyboard, login, press_for_next_page  # noqa: F401

pytestmark = BROWSER_MARKS

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
    press_for_next_page(page)
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
    press_for_next_page(page)
    page.wait_for_selector("#judge-form")
    page.keyboard.press("f")
    page.keyboard.press("Escape")  # went to the field and left it: the offered start alone is no source
    page.keyboard.press("y")
    press_for_next_page(page)
    assert "a source URL is required" in page.inner_text("body")
    context.close()
    assert sorted(Judgment.objects.filter(user=one).values_list("answer", "source_url")) == [
        ("N", ""), ("Y", "https://en.wikipedia.org/wiki/Jeremy_Irons")]


def keys_to_save(page, keys: list[str]) -> int:
    """Press ``keys`` then Enter on the judge page, waiting for the next page; the number of keys pressed."""
    page.wait_for_selector("#judge-form")
    for key in keys:
        page.keyboard.press(key)
    press_for_next_page(page)
    return len(keys) + 1


@pytest.mark.django_db(transaction=True)
def test_a_yes_with_a_reused_or_entity_source_is_three_keys(tmp_path, live_server, browser):  # noqa: F811
    """R reuses the person's last source, H / T take the head's / tail's own page (issue 15: a Yes with a reused
    source in at most 3 keys); the recent sources are offered as the field's list."""
    campaign = nationality_campaign(tmp_path, entries=3)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    judge_by_keyboard(page, "y", "https://www.imdb.com/name/nm0000460/bio/")
    page.wait_for_selector("#judge-form")
    options = page.eval_on_selector_all("#recent-sources option", "els => els.map(e => e.value)")
    assert options == ["https://www.imdb.com/name/nm0000460/bio/"]
    assert keys_to_save(page, ["y", "r"]) == 3
    assert keys_to_save(page, ["y", "h"]) == 3
    context.close()
    head_url = Item.objects.filter(campaign=campaign).select_related("head").first().head.url
    assert sorted(Judgment.objects.filter(user=one).values_list("source_url", flat=True)) == sorted(
        ["https://www.imdb.com/name/nm0000460/bio/"] * 2 + [head_url])
    assert head_url.startswith("https://en.wikipedia.org/")


@pytest.mark.django_db(transaction=True)
def test_a_full_url_typed_after_the_site_start_replaces_it(tmp_path, live_server, browser):  # noqa: F811
    """Typed, not pasted: once the typed URL's "https://" is complete the offered site start goes, so the doubled
    URL is never sent (found by trying the site as a user)."""
    campaign = nationality_campaign(tmp_path, entries=2)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    judge_by_keyboard(page, "y", "https://en.wikipedia.org/wiki/Jeremy_Irons")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("y")
    page.keyboard.press("f")
    assert page.input_value("input[name=source_url]") == "https://en.wikipedia.org/wiki/"
    page.keyboard.type(PASTED)
    assert page.input_value("input[name=source_url]") == PASTED
    page.keyboard.press("Escape")
    press_for_next_page(page)
    context.close()
    assert PASTED in Judgment.objects.filter(user=one).values_list("source_url", flat=True)
