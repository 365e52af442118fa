"""No page load between items (issue 15; headless Chromium): an annotator judges a run of items with the keyboard,
each saved with fetch and the next item shown in place. A marker set on the window survives every item (no page
was loaded), the address and the title follow each item, a refused answer comes back in place with the focus
in the source field, the answers are stored as given (checked hand-out by hand-out in the database), and the
time from Enter to the next question on screen is measured in the page. Without JavaScript the form still posts
and redirects.

The timing bound asserted here is loose (400 ms median: this test shares two cores with other work); the real
figure, and the full page load's for comparison, come from bench/judging_speed.py (README)."""
from __future__ import annotations

import statistics

import pytest

from annotation.models import Judgment, Label
from tests._annotation_support import star_campaign
from tests._annotation_web_support import member
from tests._browser_support import (  # noqa: F401 - fixture
    BROWSER_MARKS,
    SHOWN_TIMER_JS,
    browser,
    login,
    press_for_next_page,
    shown_ms,
)

pytestmark = BROWSER_MARKS

SOURCE = "https://en.wikipedia.org/wiki/Liking"
ITEMS = 12  # timed items, after the first one (refused once, then saved)


def hand_out(page) -> int:
    return int(page.get_attribute("#judge-form", "action").rstrip("/").split("/")[-1])


@pytest.mark.django_db(transaction=True)
def test_items_follow_in_place_with_answers_stored_and_errors_shown(tmp_path, live_server, browser):
    campaign = star_campaign(tmp_path, items=ITEMS + 1)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one", init_script=SHOWN_TIMER_JS)
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    page.wait_for_selector("#judge-form")
    page.evaluate("window.kgpoolMarker = 'still here'")
    expected: dict[int, tuple[str, str]] = {}

    # a Yes without a source is refused (evidence policy "yes"): the same item comes back in place, the answer
    # kept, the focus in the source field, whose shortcuts still choose (no keyboard trap)
    first = hand_out(page)
    page.keyboard.press("y")
    press_for_next_page(page)
    assert "a source URL is required" in page.inner_text(".has-error")
    announced = page.locator("#judge-announce[role=status][aria-live=polite]")  # screen readers hear the swap
    assert "a source URL is required" in announced.text_content()
    assert hand_out(page) == first and page.url.endswith(f"/judge/{first}/")
    assert page.is_checked("input[name=answer][value=Y]")
    assert page.evaluate("document.activeElement.name") == "source_url"
    page.keyboard.press("n")
    assert page.is_checked("input[name=answer][value=N]")
    press_for_next_page(page)
    expected[first] = (Label.NO, "")
    said = announced.text_content()  # the message, then the next question: one full stop between them
    assert page.inner_text("#question").strip() in said and ".." not in said, said

    timed_from = len(shown_ms(page))
    questions = set()
    for number in range(ITEMS):
        current = hand_out(page)
        assert page.url.endswith(f"/judge/{current}/")  # the address follows the item (history.replaceState)
        assert page.title().startswith("Judge · ")
        assert page.is_checked("input[name=answer][value=Y]") is False  # a fresh form, not the last one
        questions.add(page.inner_text("#question"))
        assert page.inner_text("#question") in announced.text_content()
        box = announced.bounding_box()
        assert box["width"] <= 1 and box["height"] <= 1  # read, not shown
        if number % 2:
            page.keyboard.press("n")
            expected[current] = (Label.NO, "")
        else:
            page.keyboard.press("y")
            if number == 0:  # the first source typed, later ones reused with R
                page.keyboard.press("f")
                page.keyboard.type(SOURCE)
                page.keyboard.press("Escape")
            else:
                page.keyboard.press("r")
            expected[current] = (Label.YES, SOURCE)
        press_for_next_page(page)
    assert "Nothing left for you to judge" in page.inner_text("main")
    assert "Nothing left for you to judge" in announced.text_content()
    assert page.url.endswith(f"/campaigns/{campaign.name}/judge/")
    assert page.evaluate("window.kgpoolMarker") == "still here"  # the page was never loaded again
    assert len(questions) == ITEMS
    times = shown_ms(page)[timed_from:]
    context.close()

    stored = {j.assignment_id: (j.answer, j.source_url) for j in Judgment.objects.filter(user=one)}
    assert stored == expected
    assert len(times) == ITEMS
    median = statistics.median(times)
    print(f"Enter -> next question on screen, in place: median {median:.0f} ms, max {max(times):.0f} ms "
          f"over {len(times)} items")
    assert median < 400, times


@pytest.mark.django_db(transaction=True)
def test_without_javascript_the_form_posts_and_the_next_item_is_loaded(tmp_path, live_server, browser):
    campaign = star_campaign(tmp_path, items=2)
    one = member(campaign, "one", "annotator")
    context, page = login(browser, live_server, "one", javascript=False, init_script=SHOWN_TIMER_JS)
    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    first = hand_out(page)
    page.click("label.no")  # the label covers its radio button
    with page.expect_navigation():
        page.click("#judge-form button[type=submit]")
    page.wait_for_selector("#judge-form")
    assert "Saved." in page.inner_text(".messages")
    second = hand_out(page)
    assert second != first and page.url.endswith(f"/judge/{second}/")  # redirected to the next item's address
    context.close()
    assert list(Judgment.objects.filter(user=one).values_list("assignment_id", "answer")) == [(first, Label.NO)]
