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
