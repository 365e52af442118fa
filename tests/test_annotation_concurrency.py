"""Many annotators asking for work and answering at the same moment, one DB connection per thread.

PostgreSQL: 16 threads (2 per annotator, so the same user also races with themself) over SELECT ... FOR
UPDATE SKIP LOCKED. SQLite: a smaller run; there BEGIN IMMEDIATE serialises the write transactions.
"""
from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection

from annotation.models import Assignment, Item, Judgment, Role
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item
from annotation.services.hand_out_sql import hand_out_for_api
from annotation.services.submit_sql import submit_for_api
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

URL = "https://en.wikipedia.org/wiki/Example"


def _run_threads(target, args_list) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(args_list))

    def wrapper(*args):
        try:
            barrier.wait()
            target(*args)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()  # each thread opened its own connection

    threads = [threading.Thread(target=wrapper, args=args) for args in args_list]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a worker hung"
    return errors


def api_hand_out(campaign, user):
    """The API's next-item path (issue 21: one claim statement on PostgreSQL) as a service call."""
    return hand_out_for_api(campaign.name, user).assignment


def api_submit(assignment, user, answer: str, request_id: str) -> None:
    """The API's submit path (issue 21, PostgreSQL; elsewhere it declines and ``submit_judgment`` runs)."""
    name = assignment.item.campaign.name
    if submit_for_api(name, assignment.pk, user, answer, URL, request_id=request_id) is None:
        submit_judgment(assignment.item, user, answer, URL, request_id=request_id)


def service_submit(assignment, user, answer: str, request_id: str) -> None:
    submit_judgment(assignment.item, user, answer, URL, request_id=request_id)


#: next-item and submit as the services do them and as the API's fast path does them: both keep every guarantee
PATHS = {"service": (next_item, service_submit), "api-path": (api_hand_out, api_submit)}


def _answer(item_id: int, user_id: int) -> str:
    """A fixed answer per (item, person) that any two people disagree on for about half the items.

    (item + person) % 3 made people whose ids differ by 3 agree on every item; on SQLite two people sometimes
    judge all items before the others' threads are scheduled, and a run of users 1 and 4 left no conflict for the
    adjudicators to race for (seen once in a full pass)."""
    return "Y" if hashlib.blake2b(f"{item_id}-{user_id}".encode(), digest_size=1).digest()[0] & 1 else "N"


def _judge_until_done(campaign, user, path: str = "service") -> None:
    hand_out, submit = PATHS[path]
    idle = 0
    while idle < 3:  # None can mean "the rest is locked right now": ask again a little later
        assignment = hand_out(campaign, user)
        if assignment is None:
            idle += 1
            time.sleep(0.02)
            continue
        idle = 0
        answer = _answer(assignment.item_id, user.pk)
        submit(assignment, user, answer, f"{user.pk}-{assignment.item_id}")
        # a client retry of the same request must not add a judgment
        submit(assignment, user, answer, f"{user.pk}-{assignment.item_id}")


def _check_invariants(campaign, items: int) -> None:
    per_item = Counter(Judgment.objects.filter(item__campaign=campaign).values_list("item_id", flat=True))
    assert len(per_item) == items and set(per_item.values()) == {2}
    pairs = list(Judgment.objects.filter(item__campaign=campaign).values_list("item_id", "user_id"))
    assert len(pairs) == len(set(pairs))
    handed = list(Assignment.objects.filter(item__campaign=campaign).values_list("item_id", "user_id"))
    assert len(handed) == len(set(handed))
    answers: dict[int, set[str]] = {}
    for item_id, answer in Judgment.objects.filter(item__campaign=campaign).values_list("item_id", "answer"):
        answers.setdefault(item_id, set()).add(answer)
    for item in Item.objects.filter(campaign=campaign):
        assert (item.num_judgments, item.num_active) == (2, 2)
        # decided from both answers (no consistency flag here: an N-N relation, no pooled triple in the KG)
        assert item.status == (Item.Status.AGREED if len(answers[item.pk]) == 1 else Item.Status.CONFLICT)
    assert not Assignment.objects.filter(item__campaign=campaign, state=Assignment.State.OPEN).exists()


def _hammer(tmp_path, *, items: int, annotators: int, threads_per_user: int, path: str = "service") -> None:
    campaign = star_campaign(tmp_path, items=items, name="race")
    people = users(campaign, Role.ANNOTATOR, annotators)
    errors = _run_threads(_judge_until_done, [(campaign, u, path) for u in people for _ in range(threads_per_user)])
    assert not errors, errors
    _check_invariants(campaign, items)

    # Adjudicators race for the conflicts: each conflict decided exactly once, by a non-judge.
    judges = {user.pk for user in people}
    adjudicators = users(campaign, Role.ADJUDICATOR, 4, prefix="adj")

    def adjudicate_all(user):
        idle = 0
        while idle < 3:
            handed = next_adjudication(campaign, user)
            if handed is None:
                idle += 1
                time.sleep(0.02)
                continue
            idle = 0
            adjudicate(handed.item, user, "N", "checked the source")

    conflicts = Item.objects.filter(campaign=campaign, status=Item.Status.CONFLICT).count()
    errors = _run_threads(adjudicate_all, [(u,) for u in adjudicators])
    assert not errors, errors
    decided = Item.objects.filter(campaign=campaign, status=Item.Status.ADJUDICATED)
    assert decided.count() == conflicts > 0
    assert not decided.filter(adjudication__adjudicator_id__in=judges).exists()


def on_sqlite_file(path, body) -> None:
    """Run ``body`` against a migrated SQLite file database, from a thread of its own.

    pytest-django's SQLite test database lives in memory with a shared cache, where concurrent connections
    fail at once with "database table is locked" instead of waiting; production runs on a file (WAL, busy
    timeout, BEGIN IMMEDIATE), which is what this exercises. The main thread's connection (to the in-memory
    database, which must stay open) is left alone: only connections opened while NAME points at the file use it.
    """
    settings_dict = connection.settings_dict  # shared by the connections of every thread
    original = settings_dict["NAME"]
    settings_dict["NAME"] = str(path)
    errors: list[BaseException] = []

    def run():
        try:
            call_command("migrate", verbosity=0)
            body()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connection.close()

    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join(timeout=300)
    finally:
        settings_dict["NAME"] = original
    if errors:
        raise errors[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", list(PATHS))
def test_concurrent_judging(tmp_path, path):
    if connection.vendor == "postgresql":
        _hammer(tmp_path, items=60, annotators=8, threads_per_user=2, path=path)
    else:
        on_sqlite_file(tmp_path / "race.sqlite3",
                       lambda: _hammer(tmp_path, items=20, annotators=4, threads_per_user=2, path=path))
