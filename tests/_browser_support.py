"""Headless Chromium for the browser tests (Playwright driving Debian's chromium, no `playwright install`): the
marks every browser test module sets and the ``browser`` fixture. Not collected (no test_ prefix)."""
from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing: apt-get install -y chromium"),
]


@pytest.fixture
def browser(monkeypatch):
    from playwright import sync_api
    # Playwright's sync API runs an event loop; scoped to this test so later subprocesses don't inherit it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def press_for_next_page(page, key: str = "Enter") -> None:
    """Press ``key`` on a judge or adjudicate page and wait for the page judge.js then shows in place (the next
    item, the same one with its errors, or the "nothing left" page); no page load happens."""
    shown = page.evaluate("document.documentElement.getAttribute('data-pages-shown') || '0'")
    page.keyboard.press(key)
    page.wait_for_function("shown => (document.documentElement.getAttribute('data-pages-shown') || '0') !== shown",
                           arg=shown)


# Enter -> the next page's question on screen, measured in the page (installed with context.add_init_script, so
# it runs in every document, a full page load's too): the time of the Enter key (capture phase, before any page
# script) and the moment a new <main> is in the document, a full page's at DOMContentLoaded, one shown in place
# when it replaces the old (a MutationObserver), each plus one frame (requestAnimationFrame, then a task: the frame
# that shows it painted). The figures, in ms, collect in sessionStorage, which a page load keeps.
SHOWN_TIMER_JS = """(() => {
  const PRESSED = "kgpoolPressedAt", SHOWN = "kgpoolShownMs";
  const now = () => performance.timeOrigin + performance.now();
  addEventListener("keydown", e => { if (e.key === "Enter") sessionStorage.setItem(PRESSED, String(now())); }, true);
  let main = null;
  function check() {
    const current = document.querySelector("main");
    if (!current || current === main) return;
    main = current;
    const at = sessionStorage.getItem(PRESSED);
    if (!at) return;
    sessionStorage.removeItem(PRESSED);
    requestAnimationFrame(() => setTimeout(() => {
      const shown = JSON.parse(sessionStorage.getItem(SHOWN) || "[]");
      shown.push(now() - Number(at));
      sessionStorage.setItem(SHOWN, JSON.stringify(shown));
    }, 0));
  }
  document.addEventListener("DOMContentLoaded", () => {
    check();
    new MutationObserver(check).observe(document.body, { childList: true });
  });
})();"""


def shown_ms(page) -> list[float]:
    """The Enter -> next question times SHOWN_TIMER_JS collected in this tab, in ms."""
    return page.evaluate("JSON.parse(sessionStorage.getItem('kgpoolShownMs') || '[]')")


def wait_for_shown(page, count: int) -> None:
    """Wait until SHOWN_TIMER_JS has ``count`` figures (the page after an Enter is on screen)."""
    page.wait_for_function("n => JSON.parse(sessionStorage.getItem('kgpoolShownMs') || '[]').length >= n", arg=count)


def login(browser, live_server, username: str, *, javascript: bool = True, init_script: str | None = None):
    """A new browser context logged in as ``username`` (password: tests._annotation_web_support.PASSWORD);
    ``javascript=False``: a browser without scripts; ``init_script``: run in every page before its own scripts."""
    from tests._annotation_web_support import PASSWORD

    context = browser.new_context(viewport={"width": 1200, "height": 1000}, java_script_enabled=javascript)
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state()
    return context, page


def judge_by_keyboard(page, key: str, url: str, *, screenshot: str | None = None):
    page.wait_for_selector("#judge-form")
    page.keyboard.press(key)  # y / n
    page.keyboard.press("f")  # focus the source field
    page.keyboard.press("Control+a")  # replace the prefill
    page.keyboard.type(url)
    if screenshot:
        page.screenshot(path=screenshot, full_page=True)
    press_for_next_page(page)
