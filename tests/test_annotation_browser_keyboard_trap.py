"""No keyboard trap after a validation error (issue 15; headless Chromium): a field the page focused itself (the
source field after a server-side error, the reason box after the browser's required-field check) keeps Y / N / C / F
as shortcuts until the person types in it, so "n f text" chooses No and types "text" (the defect stored the
reason "YfSource of annotator 1 is convincing"). Escape leaves a field."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Item, Judgment, Label
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, judge_by_keyboard, login, press_for_next_page  # noqa: F401

pytestmark = BROWSER_MARKS

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


@pytest.mark.django_db(transaction=True)
def test_shortcuts_after_a_server_error_choose_instead_of_typing(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=1)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    judge_by_keyboard(page, "y", "https://example.com/irons")  # not a verified source: the form comes back
    assert "not a verified source" in page.inner_text(".has-error")
    assert page.evaluate("document.activeElement.name") == "source_url"
    page.keyboard.press("n")  # meant as a shortcut: changes the answer, not the URL
    assert page.is_checked("input[name=answer][value=N]")
    assert page.input_value("input[name=source_url]") == "https://example.com/irons"
    page.keyboard.press("f")
    page.keyboard.press("Control+a")
    page.keyboard.type(WIKI)
    press_for_next_page(page)
    context.close()
    judgment = Judgment.objects.get(user=one)
    assert (judgment.answer, judgment.source_url) == (Label.NO, WIKI)


@pytest.mark.django_db(transaction=True)
def test_c_after_a_server_error_answers_can_t_tell_instead_of_typing_into_the_source(tmp_path, live_server,
                                                                                     browser):  # noqa: F811
    """The defect: "c" went into the source field the error had focused, the answer stayed Yes, and Enter saved
    Yes with the source ".../wiki/cunsure"."""
    campaign = nationality_campaign(tmp_path, entries=1)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("y")
    press_for_next_page(page)  # Yes without a source: the form comes back, the source field focused
    assert "source" in page.inner_text(".has-error").lower()
    assert page.evaluate("document.activeElement.name") == "source_url"
    typed = page.input_value("input[name=source_url]")
    page.keyboard.press("c")
    assert page.is_checked("input[name=answer][value=C]")
    assert page.evaluate("document.activeElement.name") == "quote"
    assert page.input_value("input[name=source_url]") == typed
    page.keyboard.type("unsure")
    press_for_next_page(page)
    context.close()
    judgment = Judgment.objects.get(user=one)
    assert (judgment.answer, judgment.quote, judgment.source_url) == ("C", "unsure", "")


@pytest.mark.django_db(transaction=True)
def test_the_reason_box_focused_by_the_required_check_does_not_swallow_shortcuts(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=1)
    for name, answer in (("one", "Y"), ("two", "N")):
        user = member(campaign, name, "annotator")
        submit_judgment(next_item(campaign, user).item, user, answer, WIKI)
    member(campaign, "boss", "adjudicator")
    context, page = login(browser, live_server, "boss")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/adjudicate/")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("y")
    page.keyboard.press("Enter")  # no reason yet: the browser refuses and focuses the reason box
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.press("Enter")  # still no reason: refused again, no newline typed into the box
    assert page.evaluate("document.activeElement.name") == "reason"
    assert page.input_value("textarea[name=reason]") == ""
    page.keyboard.press("n")
    page.keyboard.press("f")
    page.keyboard.type("No source of annotator 1 says so")  # a person's text, starting with a shortcut letter
    page.keyboard.press("Escape")  # leaves the box: Enter saves
    assert page.evaluate("document.activeElement.name") != "reason"
    press_for_next_page(page)
    context.close()
    decision = Adjudication.objects.get(item__campaign=campaign)
    assert (decision.label, decision.reason) == (Label.NO, "No source of annotator 1 says so")
    assert Item.objects.get(pk=decision.item_id).label == Label.NO
