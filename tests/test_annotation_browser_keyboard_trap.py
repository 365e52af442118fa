"""No keyboard trap after a validation error (issue 15; headless Chromium): the source field, when the page focused
it itself after a server-side error, keeps Y / N / C / F as shortcuts until the person types in it (a URL starts
with none of them). A comment or reason box takes every letter as text, also when the browser's required-field
check focused it: a sentence starts with any letter, and a shortcut there changed the answer the person had chosen
and ate the letter ("Yet the source..." stored a Yes with the reason "et the source..."; found from outside).
Enter in such a box saves again (no newline), Escape leaves a field."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Item, Judgment, Label
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, judge_by_keyboard, login, press_for_next_page  # noqa: F401

pytestmark = BROWSER_MARKS

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


def _judging(tmp_path, live_server, browser):  # noqa: F811
    """An annotator "one" on the judge page of a one-item campaign: (browser context, page, user)."""
    campaign = nationality_campaign(tmp_path, entries=1)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    page.wait_for_selector("#judge-form")
    return context, page, one


@pytest.mark.django_db(transaction=True)
def test_shortcuts_after_a_server_error_choose_instead_of_typing(tmp_path, live_server, browser):  # noqa: F811
    context, page, one = _judging(tmp_path, live_server, browser)
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
    context, page, one = _judging(tmp_path, live_server, browser)
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
def test_the_reason_box_focused_by_the_required_check_takes_letters_as_text(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=1)
    for name, answer in (("one", "Y"), ("two", "N")):
        user = member(campaign, name, "annotator")
        submit_judgment(next_item(campaign, user).item, user, answer, WIKI)
    member(campaign, "boss", "adjudicator")
    context, page = login(browser, live_server, "boss")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/adjudicate/")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("n")
    page.keyboard.press("Enter")  # no reason yet: the browser refuses and focuses the reason box
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.press("Enter")  # still no reason: refused again, no newline typed into the box
    assert page.evaluate("document.activeElement.name") == "reason"
    assert page.input_value("textarea[name=reason]") == ""
    reason = "Yet annotator 1's source names another Irons; found on the page itself"
    page.keyboard.type(reason)  # starts with Y: text, not a Yes
    assert page.is_checked("input[name=label][value=N]")
    assert page.input_value("textarea[name=reason]") == reason
    page.keyboard.press("Escape")  # leaves the box: Enter saves
    assert page.evaluate("document.activeElement.name") != "reason"
    press_for_next_page(page)
    context.close()
    decision = Adjudication.objects.get(item__campaign=campaign)
    assert (decision.label, decision.reason) == (Label.NO, reason)
    assert Item.objects.get(pk=decision.item_id).label == Label.NO


@pytest.mark.django_db(transaction=True)
def test_a_can_t_tell_comment_starting_with_a_shortcut_letter_keeps_the_answer(tmp_path, live_server, browser):  # noqa: F811
    context, page, one = _judging(tmp_path, live_server, browser)
    page.keyboard.press("c")  # can't tell: the comment box gets the focus
    assert page.evaluate("document.activeElement.name") == "quote"
    page.keyboard.press("Enter")  # no comment: the browser refuses, the focus stays
    assert page.evaluate("document.activeElement.name") == "quote"
    comment = "No source found either way"
    page.keyboard.type(comment)
    assert page.is_checked("input[name=answer][value=C]")
    assert page.input_value("input[name=quote]") == comment
    press_for_next_page(page)
    context.close()
    judgment = Judgment.objects.get(user=one)
    assert (judgment.answer, judgment.quote) == ("C", comment)


@pytest.mark.django_db(transaction=True)
def test_a_blank_can_t_tell_comment_is_refused_on_the_comment_box(tmp_path, live_server, browser):  # noqa: F811
    """Spaces pass the browser's required check; the server's refusal is the comment box's error, focused and
    announced, the answer and the text kept."""
    context, page, one = _judging(tmp_path, live_server, browser)
    page.keyboard.press("c")
    page.keyboard.type("   ")
    press_for_next_page(page)  # the same item with the server's error
    assert "comment is required" in page.inner_text(".has-error")
    assert page.evaluate("document.activeElement.name") == "quote"
    assert page.get_attribute("input[name=quote]", "aria-invalid") == "true"
    assert "comment is required" in page.inner_text("#judge-announce")
    assert page.is_checked("input[name=answer][value=C]")
    page.keyboard.type("two actors of that name")
    press_for_next_page(page)
    context.close()
    judgment = Judgment.objects.get(user=one)
    assert (judgment.answer, judgment.quote) == ("C", "two actors of that name")
