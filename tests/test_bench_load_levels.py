"""bench/load_annotation.py's levels (simulated annotators over HTTP, the live test server instead of gunicorn):
the default loop asks next-item before every submit; ``--next-in-submit`` asks once to start and then lets each
submit bring the next hand-out ("next": true), so the server sees one request per judged item. Both leave the
database as the benchmark's own check wants it (``verify``), with every accepted submit stored once.

PostgreSQL only: the annotators run concurrently, which the in-memory SQLite test database cannot serve.
Needs httpx (bench/requirements-load.txt).
"""
from __future__ import annotations

import asyncio

import pytest
from django.db import connection

from tests._spy_support import bench_module


@pytest.fixture(scope="module")
def bench():
    yield from bench_module("load_annotation.py")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("next_in_submit", [False, True], ids=["next-item-each", "next-in-submit"])
def test_level_judges_and_verifies(bench, live_server, next_in_submit):
    if connection.vendor == "sqlite":
        pytest.skip("PostgreSQL only: the load levels' annotators run concurrently (the PostgreSQL pass of scripts/test.sh)")
    from annotation.models import Judgment
    from rest_framework.authtoken.models import Token

    campaign = bench.build_campaign(items=40, seed=5)
    tokens = bench.make_annotators(campaign, "lvl-", 3)
    per_person = 6  # requests each: a submit takes one (with next) or two (next-item + submit)
    stats, _elapsed = asyncio.run(bench.run_level(live_server.url, campaign.name, tokens, seconds=60,
                                                  max_requests=per_person, seed=1, think=0.0,
                                                  next_in_submit=next_in_submit))
    assert stats.errors == []
    next_items = len(stats.latencies["next-item"])
    submits = len(stats.latencies["submit"])
    if next_in_submit:
        assert next_items == len(tokens)  # once each, to start; then every submit brought the next hand-out
        assert submits == len(tokens) * (per_person - 1)
    else:
        assert next_items == submits == len(tokens) * per_person // 2
    assert stats.accepted_count == len(stats.accepted) == submits
    token_user = dict(Token.objects.values_list("key", "user_id"))
    assert bench.verify(campaign, stats.accepted, token_user) == []
    stored = Judgment.objects.filter(item__campaign=campaign)
    assert stored.count() == submits
    # each stored judgment is the answer its submit sent
    by_hand_out = {(token_user[token], hand_out): answer for (token, _kind, hand_out), answer in stats.accepted.items()}
    assert {(j.user_id, j.assignment_id): j.answer for j in stored} == by_hand_out


def test_a_path_with_next_asks_for_the_next_hand_out_in_each_submit(bench):
    """``--paths legacy fast+next``: the API as issue 21 found it (two requests per item) next to one request per
    item, in one run."""
    assert bench.judging_path_and_mode("fast+next", False) == ("fast", True)
    assert bench.judging_path_and_mode("legacy", False) == ("legacy", False)
    assert bench.judging_path_and_mode("legacy", True) == ("legacy", True)  # --next-in-submit: every path
    assert bench.judging_path_and_mode(None, False) == (None, False)


def test_rounds_compare_each_path_with_the_baseline_of_the_same_round(bench):
    """``--rounds``: each path's CPU per request against legacy's in the same round, and the median of those ratios
    (a slower or faster machine in one round moves both figures of that round)."""
    cpu = {("legacy", 50, 1): 12.0, ("fast", 50, 1): 4.0, ("legacy", 50, 2): 9.0, ("fast", 50, 2): 4.5,
           ("legacy", 50, 3): 15.0, ("fast", 50, 3): 3.0, ("drf", 50, 1): 6.0}
    lines = bench.ratio_summary(cpu)
    assert len(lines) == 1  # drf ran one round: no median of one
    assert lines[0].startswith("legacy / fast at 50: CPU per request 3.00x the median of 3 rounds (3.00x, 2.00x, 5.00x")
    assert "fast 4.00, 4.50, 3.00 ms" in lines[0] and "legacy 12.00, 9.00, 15.00 ms" in lines[0]
    assert bench.ratio_summary({("fast", 50, 1): 4.0, ("fast", 50, 2): 4.0}) == []  # no baseline
