"""One open hand-out per person, also when their requests race (issue 13, item 5). The review sent three
next-item calls of one user at the same moment and got two open hand-outs in 37 of 90 tries. Here: real
threads, one database connection each, released together by a barrier, many tries; every call must come back
with the one hand-out the user holds. Judging and adjudication alike.

PostgreSQL runs it on the test database; SQLite on a file database (see test_annotation_concurrency), where
BEGIN IMMEDIATE serialises the write transactions anyway.
"""
from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection

from annotation.models import Assignment, Item, Role
from annotation.services.adjudication import next_adjudication
from annotation.services.distribution import next_item
from tests._annotation_support import star_campaign, users
from tests.test_annotation_concurrency import _run_threads, api_hand_out, on_sqlite_file

CALLS = 3  # concurrent requests of one person, as in the review


def _race(campaign, people, ask, kind: str) -> None:
    """Each person in turn: CALLS threads ask at once; exactly one open hand-out, and every call got it."""
    for person in people:
        got: list[int | None] = []
        errors = _run_threads(lambda: got.append(getattr(ask(campaign, person), "pk", None)), [()] * CALLS)
        assert not errors, errors
        open_ = list(Assignment.objects.filter(user=person, kind=kind, state=Assignment.State.OPEN)
                     .values_list("pk", flat=True))
        assert len(open_) == 1, f"{person}: {len(open_)} open hand-outs"
        assert Counter(got) == {open_[0]: CALLS}, got


def _judging_race(tmp_path, tries: int, hand_out=next_item) -> None:
    campaign = star_campaign(tmp_path, items=tries, name="own")
    campaign.judgments_per_item = 3  # room for everyone: a None would hide a second hand-out
    campaign.save()
    _race(campaign, users(campaign, Role.ANNOTATOR, tries), hand_out, Assignment.Kind.JUDGE)
    for item in Item.objects.filter(campaign=campaign):  # the counters agree with the hand-outs
        assert item.num_active == item.assignments.filter(state=Assignment.State.OPEN).count()


def _adjudication_race(tmp_path, tries: int) -> None:
    campaign = star_campaign(tmp_path, items=tries * CALLS, name="adj")
    Item.objects.filter(campaign=campaign).update(status=Item.Status.CONFLICT)
    _race(campaign, users(campaign, Role.ADJUDICATOR, tries), next_adjudication, Assignment.Kind.ADJUDICATE)


def _api_judging_race(tmp_path, tries: int) -> None:
    _judging_race(tmp_path, tries, api_hand_out)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("race", [_judging_race, _api_judging_race, _adjudication_race],
                         ids=["judge", "judge-api-path", "adjudicate"])
def test_concurrent_requests_of_one_person_open_one_hand_out(tmp_path, race):
    if connection.vendor == "postgresql":
        race(tmp_path, tries=25)
    else:
        on_sqlite_file(tmp_path / "own.sqlite3", lambda: race(tmp_path, tries=8))
