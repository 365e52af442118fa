"""End to end in headless Chromium (Playwright): two annotators judge with the keyboard only, disagree on one
item, an adjudicator resolves it in the browser; the final labels are checked in the database.

Needs Debian's chromium (/usr/bin/chromium) and `pip install playwright==1.65.2` (no `playwright install`)."""
from __future__ import annotations

import os

import pytest

from annotation.models import Assignment, Item, Judgment, Label
from tests._annotation_web_support import member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, judge_by_keyboard, login, press_for_next_page  # noqa: F401


pytestmark = BROWSER_MARKS


@pytest.mark.django_db(transaction=True)
def test_two_annotators_judge_by_keyboard_and_adjudicator_resolves(tmp_path, live_server, browser):
    campaign = nationality_campaign(tmp_path, entries=2)
    # KGPOOL_JUDGING_SCREENSHOT=PATH keeps the judging page's screenshot; by default it is this run's own file
    screenshot = os.environ.get("KGPOOL_JUDGING_SCREENSHOT") or str(tmp_path / "judging.png")
    one = member(campaign, "one", "annotator")
    member(campaign, "two", "annotator")
    member(campaign, "boss", "adjudicator")
    judge_url = f"{live_server.url}/campaigns/{campaign.name}/judge/"

    context, page = login(browser, live_server, "one")
    page.goto(judge_url)
    assert "Is Jeremy Irons's nationality" in page.inner_text("#question")
    judge_by_keyboard(page, "y", "https://en.wikipedia.org/wiki/Jeremy_Irons")
    # the source field offers the site of the last source when the person goes to it (F); the mistyped domain
    # is refused inline without losing the answer
    page.wait_for_selector("#judge-form")
    assert page.input_value("input[name=source_url]") == ""
    page.keyboard.press("f")
    assert page.input_value("input[name=source_url]") == "https://en.wikipedia.org/wiki/"
    page.keyboard.press("Escape")
    judge_by_keyboard(page, "y", "https://example.com/irons")
    assert "not a verified source" in page.inner_text(".has-error")
    assert page.is_checked("input[name=answer][value=Y]")
    page.keyboard.press("Control+a")  # the source field has the focus after the error
    page.keyboard.type("https://en.wikipedia.org/wiki/Jeremy_Irons#Personal_life")
    press_for_next_page(page)
    assert "Nothing left for you to judge" in page.inner_text("main")
    context.close()
    assert Judgment.objects.filter(user=one).count() == 2

    context, page = login(browser, live_server, "two")
    page.goto(judge_url)
    first = int(page.get_attribute("#judge-form", "action").rstrip("/").split("/")[-1])
    judge_by_keyboard(page, "y", "https://en.wikipedia.org/wiki/Jeremy_Irons", screenshot=screenshot)
    page.wait_for_selector("#judge-form")
    second = int(page.get_attribute("#judge-form", "action").rstrip("/").split("/")[-1])
    judge_by_keyboard(page, "n", "https://www.imdb.com/name/nm0000460/bio/")
    assert "Nothing left for you to judge" in page.inner_text("main")
    context.close()

    # the form actions address hand-outs, not items
    first, second = Assignment.objects.get(pk=first).item_id, Assignment.objects.get(pk=second).item_id
    assert Item.objects.get(pk=first).status == Item.Status.AGREED
    assert Item.objects.get(pk=second).status == Item.Status.CONFLICT
    assert all(j.time_on_task_ms and j.time_on_task_ms > 0 for j in Judgment.objects.all())

    context, page = login(browser, live_server, "boss")
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/adjudicate/")
    page.wait_for_selector("#judge-form")
    answers = page.inner_text(".answers")
    assert "imdb.com/name/nm0000460" in answers and "wikipedia.org/wiki/Jeremy_Irons" in answers
    page.keyboard.press("y")
    page.keyboard.press("f")
    page.keyboard.type("Wikipedia: British citizen; IMDb bio is silent")
    page.keyboard.press("Escape")
    press_for_next_page(page)
    assert "No conflict for you to adjudicate" in page.inner_text("main")
    context.close()

    labels = dict(Item.objects.filter(campaign=campaign).values_list("pk", "label"))
    assert labels == {first: Label.YES, second: Label.YES}
    decided = Item.objects.get(pk=second)
    assert decided.status == Item.Status.ADJUDICATED and decided.adjudication.adjudicator.username == "boss"
    assert os.path.getsize(screenshot) > 10_000
