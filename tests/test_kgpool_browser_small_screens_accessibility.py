"""Every page of the site, for every role, on a phone (390x844) and a laptop (1366x768): no horizontal scrolling
and no serious or critical axe-core violation (issue #15: contrast, labels, nested controls, scroll boxes...); and,
tabbing through the judging pages and the dashboard on the phone, a visible focus ring on every stop.

axe-core is vendored for this test only (tests/static/axe.min.js, MPL-2.0, from the npm package ``axe-core``);
it is evaluated through the DevTools protocol, which the Content-Security-Policy does not apply to, so the pages
are tested under their real policy. KGPOOL_A11Y_SCREENSHOTS=DIR saves a full-page screenshot of each page at
each size. Needs Debian's chromium and playwright (see tests/test_annotation_browser_judging.py)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotation.models import Membership
from annotation.selectors.guidelines import current_digest
from annotation.services.audit import draw_audit_sample
from annotation.services.guidelines import set_guidelines
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_web_support import PASSWORD, member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser  # noqa: F401 - fixture
from tests._pool_support import storage, train_tiny  # noqa: F401 (fixture)

AXE = Path(__file__).parent / "static" / "axe.min.js"
SIZES = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
SCREENSHOTS = os.environ.get("KGPOOL_A11Y_SCREENSHOTS", "")
# a long source URL, as annotators paste them: it must wrap inside its card, not widen the page
LONG_SOURCE = "https://en.wikipedia.org/wiki/Jeremy_Irons#Personal_life_and_citizenship_(Irish_and_British)"

pytestmark = BROWSER_MARKS



def judged_campaign(folder: Path):
    """The nationality campaign with one agreed item (drawn for the expert audit), one conflict (for the
    adjudicator), one item left for the annotator, and a finished evaluation run of two tiny systems."""
    from evaluation.services.runs import create_run, run_evaluation

    campaign = nationality_campaign(folder, entries=3)
    one = member(campaign, "annotator", "annotator")
    two = member(campaign, "annotator2", "annotator")
    member(campaign, "adjudicator", "adjudicator")
    member(campaign, "expert", "expert")
    member(campaign, "chief", "admin", staff=True)
    for answers in (("Y", "Y"), ("Y", "N")):
        for user, answer in zip((one, two), answers):
            item = next_item(campaign, user).item
            submit_judgment(item, user, answer, LONG_SOURCE if user == one else "https://en.wikipedia.org/wiki/Ireland",
                            quote="Irons holds both Irish and British citizenship, as he said in a 2011 interview")
    draw_audit_sample(campaign, size=1, yes_share=1.0)
    set_guidelines(campaign, "Answer **Yes** only with a [verified source](https://en.wikipedia.org/).", {})
    Membership.objects.filter(campaign=campaign).update(guidelines_read=current_digest(campaign))
    kg = campaign.pool.sample.kg
    systems = [train_tiny(kg, arch, epochs=1, dim=8, seed=i) for i, arch in enumerate(("distmult", "transe"))]
    run = run_evaluation(create_run(campaign.pool.sample, systems=systems, campaign=campaign), figures=True)
    return campaign, run


def pages_by_role(campaign, run) -> dict[str, list[str]]:
    base = f"/campaigns/{campaign.name}"
    report = f"/evaluation/{run.pk}/"
    return {
        "": ["/login/"],
        "annotator": ["/", "/campaigns/", f"{base}/", f"{base}/judge/", f"{base}/guidelines/", f"{base}/recent/",
                      "/evaluation/"],  # the report: as staff
        "adjudicator": [f"{base}/adjudicate/"],
        "expert": [f"{base}/audit/"],
        "chief": [f"{base}/", f"{base}/manage/", f"{base}/manage/members/", f"{base}/manage/sources/",
                  f"{base}/manage/order/", f"{base}/manage/order/simulation/",
                  f"{base}/manage/filter/?rules=type&rules=cardinality", f"{base}/manage/templates/",
                  f"{base}/manage/guidelines/",
                  f"{base}/manage/agreement/", f"{base}/manage/quality/", f"{base}/manage/audit/",
                  "/evaluation/", "/evaluation/new/", report, "/api/docs/"],
    }


def log_in(browser, base_url: str, username: str):
    context = browser.new_context(viewport=SIZES["phone"])
    page = context.new_page()
    page.set_default_timeout(15000)
    if username:
        page.goto(f"{base_url}/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        with page.expect_navigation():
            page.click("button[type=submit], input[type=submit]")
        assert "/login/" not in page.url
    return context, page


def overflow(page) -> int:
    """How many CSS pixels the page is wider than the window (0: no horizontal scrolling)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def too_wide(page) -> list[str]:
    """The outermost elements that stick out of the window: what to fix."""
    return page.evaluate("""() => {
        const outside = el => el.getBoundingClientRect().right > window.innerWidth + 0.5;
        return [...document.querySelectorAll('body *')]
            .filter(el => outside(el) && !outside(el.parentElement))
            .slice(0, 5).map(el => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}`
                + `${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : ''}`
                + ` (${Math.round(el.getBoundingClientRect().width)} px)`);
    }""")


def serious_violations(page) -> list[tuple[str, int]]:
    """(description, number of elements) of each serious or critical axe-core violation of the page."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))  # DevTools evaluation: not subject to the page's CSP
    return page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ['violations']});
        return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => [`${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`
                       + (v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''), v.nodes.length]);
    }""")


def focus_without_ring(page, presses: int = 30) -> list[str]:
    """Tab through the page: the focused elements without a visible ring (an outline of 2 px or more on the
    element, or on the label of a visually hidden radio button)."""
    missing = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        found = page.evaluate("""() => {
            const el = document.activeElement;
            if (!el || el === document.body) return null;
            const ring = e => { const s = getComputedStyle(e); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2; };
            const label = el.closest('label');
            return ring(el) || (label && ring(label)) ? '' : el.outerHTML.slice(0, 80);
        }""")
        if found:
            missing.append(found)
    return missing


@pytest.mark.django_db(transaction=True)
def test_every_page_fits_a_phone_and_passes_axe(tmp_path, live_server, browser, storage):  # noqa: F811
    campaign, run = judged_campaign(tmp_path)
    assert run.status == "done", run.error
    problems: list[str] = []
    for username, paths in pages_by_role(campaign, run).items():
        context, page = log_in(browser, live_server.url, username)
        for path in paths:
            response = page.goto(f"{live_server.url}{path}")
            assert response.ok, (username, path, response.status)
            if path == "/api/docs/":
                page.wait_for_selector(".opblock", timeout=20000)  # Swagger UI rendered the schema
            for size, viewport in SIZES.items():
                page.set_viewport_size(viewport)
                page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
                where = f"{username or 'anonymous'} {path} {size}"
                wider = overflow(page)
                if wider > 0:
                    problems.append(f"{where}: {wider} px wider than the window: {', '.join(too_wide(page))}")
                violations = serious_violations(page)
                problems += [f"{where}: {text}" for text, _count in violations]
                print(f"{where}: width {viewport['width'] + wider}, {len(violations)} violations "
                      f"({sum(count for _text, count in violations)} elements)")
                if size == "phone" and path.endswith(("/judge/", "/adjudicate/", "/manage/")):
                    problems += [f"{where}: focus not visible on {html}" for html in focus_without_ring(page)]
                if SCREENSHOTS:
                    name = f"{username or 'anonymous'}{path.split('?')[0]}".strip("/").replace("/", "_")
                    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{SCREENSHOTS}/{name}-{size}.png", full_page=True)
        context.close()
    assert problems == [], "\n".join(problems)
