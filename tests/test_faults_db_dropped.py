"""Fault: the database connection is killed (``pg_terminate_backend`` from a second connection) in the middle of
``submit_judgment``. The client gets a database error; nothing is half-written (no judgment without its
assignment closed and its item counter raised, no counter without its judgment); a retry with the same request
id records exactly one judgment — also when the connection died after the commit, before the reply.
PostgreSQL only (SQLite has no server connection to kill)."""
from __future__ import annotations

from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError, connection

from annotation.models import Assignment, Item, Judgment, Role
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db(transaction=True)

URL = "https://en.wikipedia.org/wiki/Jeremy_Irons#Life"


def _kill_my_connection() -> None:
    """Terminate this process's database session from another one, as a server restart or a proxy would."""
    import psycopg

    pid = connection.connection.info.backend_pid
    db = connection.settings_dict
    with psycopg.connect(dbname=db["NAME"], user=db["USER"], password=db.get("PASSWORD") or None,
                         host=db.get("HOST") or None, port=db.get("PORT") or None, autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]


def _assert_consistent(campaign) -> None:
    """Every item's counter equals its judgments, and a judge's hand-out is closed exactly when judged."""
    for item in Item.objects.filter(campaign=campaign):
        judged = set(Judgment.objects.filter(item=item).values_list("user_id", flat=True))
        assert item.num_judgments == len(judged), (item.pk, item.num_judgments, judged)
        for assignment in Assignment.objects.filter(item=item, kind=Assignment.Kind.JUDGE):
            assert (assignment.state == Assignment.State.DONE) == (assignment.user_id in judged)


@pytest.fixture
def campaign(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): the test kills the server connection")
    return star_campaign(tmp_path, items=3)


# where the connection dies: after the judgment row is inserted (while closing the hand-out), while saving the
# item's counters (the last write of the transaction), and after the commit (the consistency check)
HOOKS = {
    "after-judgment-insert": ("annotation.models.Assignment.save", True),
    "at-counter-update": ("annotation.models.Item.save", True),
    "after-commit": ("annotation.services.consistency.check_judgment", False),
}


@pytest.mark.parametrize("where", list(HOOKS))
def test_connection_killed_inside_submit_then_retry_records_one_judgment(campaign, where):
    target, in_transaction = HOOKS[where]
    (annotator,) = users(campaign, Role.ANNOTATOR, 1)
    assignment = next_item(campaign, annotator)
    item = assignment.item
    original = mock.patch(target).get_original()[0]
    calls = []

    def dying(*args, **kwargs):
        if not calls:
            calls.append(connection.in_atomic_block)
            _kill_my_connection()
        return original(*args, **kwargs)

    with mock.patch(target, autospec=True, side_effect=dying):
        with pytest.raises((OperationalError, InterfaceError)):
            submit_judgment(item, annotator, "Y", URL, request_id="req-1")
    assert calls == [in_transaction]
    connection.close_if_unusable_or_obsolete()  # what Django does at the end of the failed request

    committed = where == "after-commit"
    assert Judgment.objects.filter(item=item).count() == (1 if committed else 0)
    _assert_consistent(campaign)

    # the client retries the same request: exactly one judgment, counters and hand-out consistent
    judgment = submit_judgment(item, annotator, "Y", URL, request_id="req-1")
    again = submit_judgment(item, annotator, "Y", URL, request_id="req-1")
    assert again.pk == judgment.pk
    assert list(Judgment.objects.filter(item=item).values_list("pk", flat=True)) == [judgment.pk]
    assert Item.objects.get(pk=item.pk).num_judgments == 1
    assert Assignment.objects.get(pk=assignment.pk).state == Assignment.State.DONE
    _assert_consistent(campaign)
