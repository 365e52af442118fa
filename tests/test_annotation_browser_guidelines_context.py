"""Guidelines and KG context on a phone (issue 15), in Chromium at 390x844: an annotator's first visit shows long
guidelines (long words, long links, code) and asks to confirm; then the judge page, with the guidelines, long known
facts and known answers beside the question, is no wider than the screen and has no serious or critical axe-core
violation, under the site's real Content-Security-Policy."""
from __future__ import annotations

import pytest

from annotation.services.guidelines import set_guidelines
from pooling.models import Entity, Relation, Split, Triple
from tests._annotation_web_support import NAT, member, nationality_campaign
from tests._browser_support import BROWSER_MARKS, browser  # noqa: F401 - fixture
from tests.test_kgpool_browser_small_screens_accessibility import (
    SIZES, log_in, overflow, serious_violations, too_wide,
)

pytestmark = BROWSER_MARKS

LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungsanstalt" * 2
GUIDELINES = (
    "# Deciding nationality\n\n" + ("Answer **Yes** only when a verified source says so. " * 12) + "\n\n"
    f"- {LONG_WORD}\n- see <https://en.wikipedia.org/wiki/Help:Citing_sources#{'Very_long_anchor_' * 8}>\n\n"
    "```\n" + "code_that_does_not_wrap_by_itself_" * 6 + "\n```\n\n"
    "<script>alert('not run')</script>\n\n> A quoted rule that is long enough to wrap on a phone screen, twice over."
)


def long_context(campaign) -> None:
    """Long entity names in known facts and known answers of the question."""
    kg = campaign.pool.sample.kg
    irons = Entity.objects.get(kg=kg, key="irons")
    nat = Relation.objects.get(kg=kg, key=NAT)
    relation = Relation.objects.create(kg=kg, index=60, key="/film/actor/film/" + "performance_" * 6,
                                       text="appeared in the film, television or stage performance of")
    for n in range(6):
        film = Entity.objects.create(kg=kg, index=500 + n, key=f"film{n}", name=f"{LONG_WORD[:60]} Part {n}")
        Triple.objects.create(kg=kg, head=irons, relation=relation, tail=film, split=Split.TRAIN)
        country = Entity.objects.create(kg=kg, index=600 + n, key=f"c{n}",
                                        name=f"The United Kingdom of Great Britain and Northern Ireland {n}")
        Triple.objects.create(kg=kg, head=irons, relation=nat, tail=country, split=Split.TRAIN)


@pytest.mark.django_db(transaction=True)
def test_guidelines_and_context_fit_a_phone_and_pass_axe(tmp_path, live_server, browser):  # noqa: F811
    campaign = nationality_campaign(tmp_path, entries=1)
    set_guidelines(campaign, GUIDELINES, {NAT: f"Citizenship, not residence. {LONG_WORD}"})
    long_context(campaign)
    member(campaign, "annotator", "annotator")
    context, page = log_in(browser, live_server.url, "annotator")
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    problems: list[str] = []

    def check(where: str) -> None:
        for size, viewport in SIZES.items():
            page.set_viewport_size(viewport)
            page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
            wider = overflow(page)
            if wider > 0:
                problems.append(f"{where} {size}: {wider} px wider than the window: {', '.join(too_wide(page))}")
            problems.extend(f"{where} {size}: {text}" for text, _count in serious_violations(page))

    page.goto(f"{live_server.url}/campaigns/{campaign.name}/judge/")
    assert page.url.endswith("/guidelines/")
    assert page.locator(".markdown h1").inner_text() == "Deciding nationality"
    check("guidelines")
    page.set_viewport_size(SIZES["phone"])
    with page.expect_navigation():
        page.click("#confirm-guidelines")
    page.wait_for_url("**/judge/*/")
    assert page.locator("#question").is_visible()
    page.click(".guidelines summary")  # unfold the guidelines beside the question
    assert page.locator(".guidelines .markdown h1").is_visible()
    assert page.locator(".facts li").count() == 6  # five of the head, the one of the tail
    assert "The United Kingdom of Great Britain" in page.locator(".known-answers").inner_text()
    check("judge")
    context.close()
    assert alerts == []  # the <script> in the guidelines is text, never run
    assert problems == [], "\n".join(problems)
