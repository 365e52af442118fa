"""Judging speed in the browser (issue 15): keystrokes and milliseconds per item on the quickstart campaign.

    .venv/bin/python bench/judging_speed.py                 # 12 items per case and path
    .venv/bin/python bench/judging_speed.py --items 20 --var-dir /tmp/kgpool-bench

What it does: sets up the quickstart's UMLS campaign ``umls-demo`` in ``--var-dir`` (``manage.py quickstart
--no-serve``: SQLite, about half a minute the first time, quick when run again), gives the demo accounts a known
password, and makes conflicts for the adjudicator in-process (annotator2 answers Yes and a bench annotator No to
the same items, through the services). Then, for each path, it serves the site as the quickstart does
(``manage.py runserver --noreload --insecure`` on 127.0.0.1) and drives headless Chromium (Debian's chromium,
Playwright) with the keyboard:

- an obvious No: ``N``, Enter (annotator1);
- an obvious Yes with a reused source: ``Y``, ``R`` (the person's last source), Enter (annotator1; one Yes with a
  typed source first, not counted, so that there is a source to reuse);
- an adjudication: ``Y``, ``F``, a short reason, Escape, Enter (adjudicator; the reason is required).

Before its first key the bench waits ``--read-ms`` on each item, as a person reads it: the time in which judge.js
has the server prepare the next page (annotation/selectors/next_page.py).

"before" is the full page load per item (``JUDGING_IN_PLACE=0``: the form posts, the server redirects twice, the
browser loads the next page), "after" the page shown in place (judge.js sends the form with fetch and the server
answers with the next page). The time is measured in the page from the Enter key to the next question on screen
(tests/_browser_support.SHOWN_TIMER_JS: the new <main> in the document plus one frame). It prints keys per item and
the median and p95 of the times per case and path, and the ratio before / after. Loopback only; the server is
stopped at the end.
"""
from __future__ import annotations

import argparse
import math
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests._browser_support import ARGS, CHROMIUM, SHOWN_TIMER_JS, shown_ms, wait_for_shown  # noqa: E402

CAMPAIGN = "umls-demo"
PASSWORD = "bench-judging-speed-1"
BENCH_ANNOTATOR = "bench-annotator"
SOURCE = "https://en.wikipedia.org/wiki/Unified_Medical_Language_System"
REASON = "source 1 says so"
PATHS = {"before": "0", "after": "1"}


def setup(var_dir: Path, conflicts: int) -> None:
    """The quickstart's campaign, the demo accounts' password, and ``conflicts`` open conflicts to adjudicate."""
    env = {**os.environ, "KGPOOL_VAR_DIR": str(var_dir)}
    subprocess.run([sys.executable, "manage.py", "quickstart", "--no-serve"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.environ["KGPOOL_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgpool.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from annotation.models import Campaign, Item, Membership, Role
    from annotation.services.distribution import next_item
    from annotation.services.judging import submit_judgment

    users = get_user_model()
    for username in ("annotator1", "annotator2", "adjudicator"):
        user = users.objects.get(username=username)
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
    campaign = Campaign.objects.get(name=CAMPAIGN)
    other, _ = users.objects.get_or_create(username=BENCH_ANNOTATOR)
    Membership.objects.get_or_create(campaign=campaign, user=other, role=Role.ANNOTATOR)
    yes_sayer = users.objects.get(username="annotator2")
    waiting = Item.objects.filter(campaign=campaign, status=Item.Status.CONFLICT).count()
    for _attempt in range(5 * conflicts):
        if waiting >= conflicts:
            return
        first = next_item(campaign, yes_sayer)
        if first is None:
            break
        if not first.item.is_gold:  # gold checks are judged by everyone and never conflict
            hand_to(first.item, other)
        submit_judgment(first.item, yes_sayer, "Y", SOURCE)
        if not first.item.is_gold:
            submit_judgment(first.item, other, "N", "")
            waiting += 1
    raise SystemExit("could not make enough conflicts: the campaign has too few items left")


def hand_to(item, user) -> None:
    """Hand ``item`` to ``user`` as a second annotator (the bench's own set-up, instead of waiting for the queue
    to give it to them): the hand-out row and the item's count of open hand-outs, as next_item writes them."""
    from datetime import timedelta

    from django.db.models import F
    from django.utils import timezone

    from annotation.models import Assignment, Item

    now = timezone.now()
    Assignment.objects.create(item=item, user=user, kind=Assignment.Kind.JUDGE, state=Assignment.State.OPEN,
                              handed_out_at=now, expires_at=now + timedelta(hours=1))
    Item.objects.filter(pk=item.pk).update(num_active=F("num_active") + 1, status=Item.Status.IN_PROGRESS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(var_dir: Path, in_place: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "KGPOOL_VAR_DIR": str(var_dir), "JUDGING_IN_PLACE": in_place}
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload",
                               "--insecure"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/login/", timeout=1)
            return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def log_in(browser, url: str, username: str):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.add_init_script(SHOWN_TIMER_JS)
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    return context, page


def open_work(page, url: str, what: str) -> None:
    page.goto(f"{url}/campaigns/{CAMPAIGN}/{what}/")
    if page.url.endswith("/guidelines/"):  # the first visit asks to read the guidelines
        with page.expect_navigation():
            page.click("#confirm-guidelines")
    page.wait_for_selector("#judge-form")


def answer(page, keys: list[str], in_place: bool, read_ms: int) -> int:
    """Read for ``read_ms``, press ``keys`` (a key name, or text to type), then Enter; wait for the next question;
    the keystrokes."""
    page.wait_for_selector("#judge-form")
    page.wait_for_timeout(read_ms)
    count = len(shown_ms(page))
    pressed = 1
    for key in keys:
        if len(key) > 1 and key not in ("Escape", "Enter"):
            page.keyboard.type(key)
            pressed += len(key)
        else:
            page.keyboard.press(key)
            pressed += 1
    if in_place:
        page.keyboard.press("Enter")
    else:
        with page.expect_navigation():
            page.keyboard.press("Enter")
    wait_for_shown(page, count + 1)
    return pressed


def run_case(browser, url: str, username: str, what: str, keys: list[str], items: int, in_place: bool,
             warm_up: list[list[str]], read_ms: int) -> tuple[list[int], list[float]]:
    context, page = log_in(browser, url, username)
    open_work(page, url, what)
    for keys_first in warm_up:
        answer(page, keys_first, in_place, read_ms)
    before = len(shown_ms(page))
    strokes = [answer(page, keys, in_place, read_ms) for _ in range(items)]
    times = shown_ms(page)[before:]
    context.close()
    return strokes, times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var-dir", type=Path, default=Path("/tmp/kgpool-judging-speed"),
                        help="where the quickstart's database lives (made if missing, reused if there)")
    parser.add_argument("--items", type=int, default=12, help="items per case and path (default 12)")
    parser.add_argument("--read-ms", type=int, default=1500,
                        help="time a person reads each item before the first key (default 1500 ms)")
    args = parser.parse_args()
    args.var_dir.mkdir(parents=True, exist_ok=True)
    print(f"setting up the quickstart campaign in {args.var_dir} ...", flush=True)
    setup(args.var_dir, conflicts=2 * args.items)
    cases = {
        "obvious No": ("annotator1", "judge", ["n"], []),
        "Yes, reused source (R)": ("annotator1", "judge", ["y", "r"], [["y", "f", "Control+a", SOURCE]]),
        "adjudication": ("adjudicator", "adjudicate", ["y", "f", REASON, "Escape"], []),
    }
    results: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for path, flag in PATHS.items():
            server, url = serve(args.var_dir, flag)
            try:
                for case, (username, what, keys, warm_up) in cases.items():
                    print(f"  {path}: {case} ...", flush=True)
                    results[case, path] = run_case(browser, url, username, what, keys, args.items, flag == "1",
                                                   warm_up, args.read_ms)
            finally:
                server.terminate()
                server.wait(timeout=10)
        browser.close()

    print()
    print(f"Enter -> next question on screen, {args.items} items per case, {args.read_ms} ms reading each; "
          "before = full page load, after = in place")
    print(f"{'case':<24} {'keys/item':>9} {'before median':>14} {'p95':>7} {'after median':>13} {'p95':>7} "
          f"{'ratio':>6}")
    for case in cases:
        strokes, before = results[case, "before"]
        _strokes, after = results[case, "after"]
        keys = statistics.median(strokes)
        b, a = statistics.median(before), statistics.median(after)
        print(f"{case:<24} {keys:>9g} {b:>11.0f} ms {p95(before):>4.0f} ms {a:>10.0f} ms {p95(after):>4.0f} ms "
              f"{b / a:>5.1f}x")


if __name__ == "__main__":
    main()
