"""Under the strict Content-Security-Policy the pages still work in headless Chromium, and the browser reports no
violation and no script error on any of them (issue #13, item 9): login, judging by keyboard (judge.js), the
campaign dashboard's progress bars, the template preview (templates.js), an evaluation report polling its
progress (report.js), Swagger UI on /api/docs/ and the admin.

Needs Debian's chromium (/usr/bin/chromium) and playwright (see tests/test_annotation_browser_judging.py)."""
from __future__ import annotations


import pytest

from annotation.models import Judgment
from tests._annotation_web_support import PASSWORD, member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser, press_for_next_page  # noqa: F401 - fixture


pytestmark = BROWSER_MARKS



class Console:
    """Every console error or warning, CSP violation report and uncaught script error of a page."""

    def __init__(self, page):
        self.messages: list[str] = []
        page.on("console", self.record)
        page.on("pageerror", lambda error: self.messages.append(f"pageerror: {error}"))

    def record(self, message) -> None:
        if message.type not in ("error", "warning"):
            return
        if (message.location or {}).get("url", "").endswith("/favicon.ico"):
            return  # Chromium asks for /favicon.ico on its own; no page names it
        self.messages.append(f"{message.type}: {message.text} ({(message.location or {}).get('url')})")


def login(browser, live_server, username):
    context = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15000)
    console = Console(page)
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit], input[type=submit]")
    assert "/login/" not in page.url, "the login form did not post (form-action?)"
    return context, page, console


@pytest.mark.django_db(transaction=True)
def test_pages_work_under_the_policy_without_violations(tmp_path, live_server, browser):
    from evaluation.models import EvaluationRun

    campaign = nationality_campaign(tmp_path, entries=2)
    one = member(campaign, "one", "annotator")
    member(campaign, "chief", "admin", staff=True)
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)  # pending: report.js polls
    base = f"{live_server.url}/campaigns/{campaign.name}"
    seen: dict[str, list[str]] = {}

    context, page, console = login(browser, live_server, "one")
    response = page.goto(f"{base}/judge/")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector("#judge-form")
    page.keyboard.press("y")  # judge.js: keys choose the answer and focus the source field
    assert page.is_checked("input[name=answer][value=Y]")
    page.keyboard.press("f")
    page.keyboard.press("Control+a")
    page.keyboard.type("https://en.wikipedia.org/wiki/Jeremy_Irons")
    press_for_next_page(page)
    assert Judgment.objects.filter(user=one).count() == 1
    seen["annotator: login, judge"] = console.messages
    context.close()

    context, page, console = login(browser, live_server, "chief")
    page.goto(f"{base}/manage/")
    bars = page.query_selector_all("progress.bar")
    assert bars and all(bar.bounding_box()["width"] > 50 for bar in bars)  # styled by the static CSS
    page.goto(f"{base}/manage/templates/")
    field = page.query_selector("input[data-relation]")
    # templates.js previews the saved text on focus, then the typed one 250 ms after the last keystroke: wait for
    # the typed one (an invalid text answers 400, which the browser logs as a console error)
    with page.expect_response(lambda r: "/manage/templates/preview/" in r.url and "citizen" in r.url) as typed:
        field.fill("Is {head} a citizen of {tail}?")
    assert typed.value.status == 200
    page.goto(f"{base}/manage/quality/")
    page.goto(f"{base}/manage/agreement/")
    with page.expect_response(lambda r: r.url.endswith(f"/evaluation/{run.pk}/progress.json"), timeout=10000):
        page.goto(f"{live_server.url}/evaluation/{run.pk}/")  # report.js polls after 2 s
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=20000)
    assert "kgpool API" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".opblock", timeout=20000)  # the schema was fetched and rendered
    page.goto(f"{live_server.url}/admin/")
    assert "Site administration" in page.inner_text("body")
    seen["campaign admin: dashboard, templates, quality, agreement, report, api docs, admin"] = console.messages
    context.close()

    assert seen == {key: [] for key in seen}, seen
