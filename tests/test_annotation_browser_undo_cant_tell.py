"""Undo and "can't tell" by keyboard (issue 15; headless Chromium): Backspace (no field focused) undoes the last
answer and shows its item again; C chooses "can't tell" and moves to the comment box, where Backspace edits the
text; Enter saves it without a source even where the campaign requires one for Y and N."""
from __future__ import annotations

import pytest

from annotation.models import Judgment, Label
from tests._annotation_web_support import member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, judge_by_keyboard, login  # noqa: F401 - fixture

pytestmark = BROWSER_MARKS

WIKI = "https://en.wikipedia.org/wiki/Jeremy_Irons"


@pytest.mark.django_db(transaction=True)
def test_backspace_undoes_and_c_answers_can_t_tell(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=2, evidence_policy="both")
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    first_url = page.url
    question = page.inner_text("#question")
    judge_by_keyboard(page, "n", WIKI)
    page.wait_for_selector("#judge-form")
    assert page.url != first_url  # the next item
    answered = Judgment.objects.get(user=one)
    with page.expect_navigation():
        page.keyboard.press("Backspace")
    page.wait_for_selector("#judge-form")
    assert page.url == first_url and page.inner_text("#question") == question  # the undone item, same hand-out
    assert "Answer undone" in page.content()
    assert Judgment.all_objects.get(pk=answered.pk).withdrawn_at is not None
    assert not Judgment.objects.filter(user=one).exists()

    page.keyboard.press("c")
    assert page.is_checked("input[name=answer][value=C]")
    assert page.evaluate("document.activeElement.name") == "quote"
    page.keyboard.type("two people of that namee")
    page.keyboard.press("Backspace")  # in a field: edits the text, no undo
    assert page.input_value("input[name=quote]") == "two people of that name"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#judge-form")
    context.close()
    judgment = Judgment.objects.get(user=one)
    assert (judgment.item_id, judgment.answer, judgment.quote, judgment.source_url) == \
        (answered.item_id, "C", "two people of that name", "")
    assert judgment.answer != Label.NO
