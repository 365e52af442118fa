"""bench/load_annotation.py --published (bench/load_published.py) on a small part of the published FB15k-237 campaign, end to end over
HTTP (the live test server instead of gunicorn): import, two annotators answering from judgments.tsv through
the API (one wrong on a seeded share), the adjudicator deciding every conflict through the API, then the
labels export compared with the published lines.

The adjudication is run as a second step on purpose: before it the export must differ from the file (exactly
the conflicts are missing), after it it must equal it. On SQLite (in memory, one connection shared with the
test server) the two annotators' requests are interleaved but sent one at a time.

Needs httpx (bench/requirements-load.txt). FB15k-237 is imported into the test database (about 20 s).
"""
from __future__ import annotations

import pytest
from django.db import connection

from tests._spy_support import bench_module

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def bench():
    yield from bench_module("load_published.py")


def test_select_pool_takes_whole_questions_in_sample_order(bench):
    judged = {("a", "r", "x"): "Y", ("a", "r", "y"): "N", ("b", "r", "x"): "N", ("c", "s", "d"): "Y",
              ("e", "s", "d"): "N", ("f", "s", "g"): "N"}
    sample = [("a", "r", "x"), ("c", "s", "d")]
    assert bench.select_pool(judged, sample, None) == [("a", "r", "y"), ("b", "r", "x"), ("e", "s", "d"), ("f", "s", "g")]
    # (a, r, ?) and (?, r, x) of the first sampled triple: two entries, enough for a limit of 1 or 2.
    assert bench.select_pool(judged, sample, 1) == [("a", "r", "y"), ("b", "r", "x")]
    assert bench.select_pool(judged, sample, 3) == [("a", "r", "y"), ("b", "r", "x"), ("e", "s", "d")]


@pytest.mark.django_db(transaction=True)
def test_published_replay_subset(bench, live_server, shared_data, tmp_path):
    if connection.vendor == "sqlite":
        # The replay is a client of the real deployment (PostgreSQL, concurrent annotators); on in-memory SQLite
        # it could only run one request at a time, and the same judging flow is covered there by test_annotation_*.
        pytest.skip("the published replay runs against PostgreSQL (the PostgreSQL pass of scripts/test.sh)")
    replay = bench.setup_published(shared_data, tmp_path, limit_items=80, seed=3, wrong_rate=0.1,
                                   kg_name="fb15k-237-replay")
    assert replay.problems == []
    items = len(replay.labels)
    assert 80 <= items < 120 and len(replay.wrong) == round(0.1 * items)
    assert len(replay.expected) == items + 1023  # the sampled triples are exported from the sample, as Y
    serial = connection.vendor == "sqlite"

    before = bench.run_published(live_server.url, replay, seed=3, serial=serial, adjudicate=False, progress_every=2)
    counts = before.counts
    assert counts["submits"] == 2 * items
    # each submit brought the next hand-out ("next": true): a next-item request only to start and when nothing was
    # left for the moment (a request per item each way would make it twice the submits)
    assert counts["submits"] < counts["requests"] < 1.1 * counts["submits"]
    assert counts["disagreements"] == len(replay.wrong) > 0
    assert counts["adjudications"] == 0
    # Without the adjudicator the conflicts have no final label: exactly they are missing from the export.
    assert not before.ok and not before.comparison.ok
    assert (before.comparison.missing, before.comparison.different, before.comparison.extra) == (counts["conflicts"], 0, 0)
    assert any("not decided" in p for p in before.problems)

    after = bench.run_published(live_server.url, replay, seed=3, serial=serial, progress_every=2)
    assert after.problems == []
    assert after.comparison.ok, after.comparison.examples
    assert after.comparison.exported == after.comparison.equal == items + 1023
    assert after.counts["adjudications"] == after.counts["conflicts"] == counts["conflicts"]
    assert after.counts["submits"] == 2 * items  # the second call found nothing left to judge
    assert after.ok


def test_merged_stats_keep_every_figure(bench):
    """A replay merges the stats of its passes: the statements per request (X-Kgpool-Queries) come along with the
    latencies and statuses (the table printed nan for them)."""
    from bench.load_server import Stats

    first, second = Stats(), Stats()
    first.queries["submit"] += [3, 3]
    first.latencies["submit"] += [0.01, 0.02]
    second.queries["submit"] += [4]
    second.latencies["submit"] += [0.03]
    second.statuses["submit"][201] += 1
    second.requests = 1
    bench._merge(first, second)
    assert first.queries["submit"] == [3, 3, 4] and first.latencies["submit"] == [0.01, 0.02, 0.03]
    assert first.statuses["submit"][201] == 1 and first.requests == 1
