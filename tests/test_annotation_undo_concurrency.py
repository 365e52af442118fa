"""Undo racing the answers and decisions of others (issue 15), one DB connection per thread: PostgreSQL (row
locks: the undo locks the item and checks its rules after the lock), and a SQLite file (BEGIN IMMEDIATE). For
every item exactly one order wins: an undo that commits first lets the second answer through and leaves the item
in progress; a second answer or an adjudication that commits first makes the undo refuse. Nothing half-done:
every stored item state equals the one derived from its facts, and every withdrawn judgment has its undo version."""
from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection

from annotation.models import Adjudication, Item, Judgment, LabelVersion, Role
from annotation.services.adjudication import adjudicate
from annotation.services.distribution import next_item
from annotation.services.errors import InvalidState, UndoRefused
from annotation.services.item_state import find_inconsistent_items
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from tests._annotation_support import star_campaign, users
from tests.test_annotation_concurrency import _run_threads, on_sqlite_file

URL = "https://en.wikipedia.org/wiki/Example"


def _on_each_backend(tmp_path, body) -> None:
    if connection.vendor == "postgresql":
        body(tmp_path, items=12)
    else:
        on_sqlite_file(tmp_path / "undo-race.sqlite3", lambda: body(tmp_path, items=4))


def _undo_against_second_answers(tmp_path, *, items: int) -> None:
    campaign = star_campaign(tmp_path, items=items, name="undo-race")
    first, = users(campaign, Role.ANNOTATOR, 1, prefix="first")
    seconds = users(campaign, Role.ANNOTATOR, items, prefix="second")
    mine = [submit_judgment(next_item(campaign, first).item, first, "Y", URL) for _ in range(items)]
    held = {next_item(campaign, user).item_id: user for user in seconds}  # each holds one item: the race is on
    assert set(held) == {j.item_id for j in mine}
    outcomes: list[tuple[str, int, str]] = []

    def undo(judgment):
        try:
            undo_judgment(judgment, first)
            outcomes.append(("undo", judgment.item_id, "done"))
        except UndoRefused as exc:
            outcomes.append(("undo", judgment.item_id, exc.code))

    def answer(item_id):
        submit_judgment(Item.objects.get(pk=item_id), held[item_id], "Y", URL)

    errors = _run_threads(lambda kind, arg: undo(arg) if kind == "undo" else answer(arg),
                          [("undo", j) for j in mine] + [("answer", j.item_id) for j in mine])
    assert not errors, errors
    assert set(Counter(code for _k, _i, code in outcomes)) <= {"done", "answered_after"}
    for _kind, item_id, code in outcomes:
        item = Item.objects.get(pk=item_id)
        answers = list(Judgment.objects.filter(item=item).values_list("user_id", flat=True))
        if code == "done":  # the undo came first: the second answer alone, the first person's hand-out open again
            assert answers == [held[item_id].pk] and (item.status, item.num_active) == ("in_progress", 2)
        else:
            assert sorted(answers) == sorted([first.pk, held[item_id].pk]) and item.status == "agreed"
    withdrawn = Judgment.all_objects.filter(item__campaign=campaign, withdrawn_at__isnull=False).count()
    assert withdrawn == sum(code == "done" for *_x, code in outcomes)
    assert LabelVersion.objects.filter(item__campaign=campaign, reason="undo").count() == withdrawn
    assert find_inconsistent_items(campaign) == []


def _undo_against_adjudications(tmp_path, *, items: int) -> None:
    campaign = star_campaign(tmp_path, items=items, name="undo-adj-race")
    first, second = users(campaign, Role.ANNOTATOR, 2)
    judge, = users(campaign, Role.ADJUDICATOR, 1)
    for _ in range(items):
        submit_judgment(next_item(campaign, first).item, first, "Y", URL)
    last = [submit_judgment(next_item(campaign, second).item, second, "N", URL) for _ in range(items)]
    assert Item.objects.filter(campaign=campaign, status="conflict").count() == items
    won: list[tuple[str, int]] = []

    def undo(judgment):
        try:
            undo_judgment(judgment, second)
            won.append(("undo", judgment.item_id))
        except UndoRefused as exc:
            assert exc.code == "adjudicated"

    def decide(item_id):
        try:
            adjudicate(Item.objects.get(pk=item_id), judge, "N", "the source says no")
            won.append(("adjudication", item_id))
        except InvalidState:
            pass  # the undo came first: no conflict any more

    errors = _run_threads(lambda kind, arg: undo(arg) if kind == "undo" else decide(arg),
                          [("undo", j) for j in last] + [("decide", j.item_id) for j in last])
    assert not errors, errors
    assert sorted(item_id for _w, item_id in won) == sorted(j.item_id for j in last)  # exactly one per item
    for winner, item_id in won:
        item = Item.objects.get(pk=item_id)
        if winner == "undo":
            assert item.status == "in_progress" and not Adjudication.objects.filter(item=item).exists()
        else:
            assert (item.status, item.label) == ("adjudicated", "N")
            assert Judgment.objects.filter(item=item).count() == 2
    assert find_inconsistent_items(campaign) == []


@pytest.mark.django_db(transaction=True)
def test_undo_races_the_second_answer(tmp_path):
    _on_each_backend(tmp_path, _undo_against_second_answers)


@pytest.mark.django_db(transaction=True)
def test_undo_races_an_adjudication(tmp_path):
    _on_each_backend(tmp_path, _undo_against_adjudications)
