"""submit_judgment's write path, case by case (issue 19: the mutants outside the rule functions): what one submit
reads under the item's lock (judgments_to_read), what it writes back (the judgment, the closed hand-out, the
item's counters and decision, read again from the database), and what runs after its transaction (after_judgment:
the adaptive orders' reward only when the label became final, the consistency check only off gold checks)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Judgment, Role
from annotation.services import consistency, judging_order
from annotation.services.distribution import next_item
from annotation.services.judging import judgments_to_read, submit_judgment
from tests._annotation_support import star_campaign, users

URL = "https://en.wikipedia.org/wiki/Jeremy_Irons"


@pytest.fixture
def campaign(tmp_path):
    return star_campaign(tmp_path, items=3, assignment_timeout_s=60, allowed_domains=["wikipedia.org"])


@pytest.fixture
def calls(monkeypatch):
    """The calls after_judgment makes, recorded instead of run."""
    seen: dict[str, list] = {"label_final": [], "check_judgment": []}
    monkeypatch.setattr(judging_order, "label_final", lambda campaign: seen["label_final"].append(campaign.pk))
    def check_judgment(judgment, *, item, campaign, known=None):
        assert known is None  # submit_judgment reads no facts ahead (the API's few-statement submit does)
        seen["check_judgment"].append((judgment.pk, item.pk, item.status, campaign.pk))

    monkeypatch.setattr(consistency, "check_judgment", check_judgment)
    return seen


@pytest.mark.django_db
def test_what_a_submit_writes(campaign, calls):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    handed = next_item(campaign, a, now=start)
    first = submit_judgment(handed.item, a, "Y", URL, quote=" infobox ", client_time_ms=700, request_id="q1",
                            now=start + timedelta(seconds=1))
    stored = Judgment.objects.get()
    assert first.pk == stored.pk
    assert (stored.item_id, stored.user_id, stored.assignment_id, stored.answer, stored.source_url,
            stored.source_domain, stored.quote, stored.given_at, stored.time_on_task_ms, stored.client_time_ms,
            stored.request_id) == (handed.item_id, a.pk, handed.pk, "Y", URL, "wikipedia.org", "infobox",
                                   start + timedelta(seconds=1), 1000, 700, "q1")
    assignment = Assignment.objects.get(pk=handed.pk)
    assert (assignment.state, assignment.closed_at) == (Assignment.State.DONE, start + timedelta(seconds=1))
    item = Item.objects.get(pk=handed.item_id)
    assert (item.num_judgments, item.status, item.label, item.label_origin) == (1, Item.Status.IN_PROGRESS, "", "")
    before = item.updated_at
    # not final yet: no reward; the consistency check ran once, on the saved judgment and the item as written
    assert calls == {"label_final": [], "check_judgment": [(first.pk, item.pk, Item.Status.IN_PROGRESS, campaign.pk)]}

    theirs = next_item(campaign, b, now=start)
    assert theirs.item_id == handed.item_id
    second = submit_judgment(theirs.item, b, "Y", URL, now=start + timedelta(seconds=2))
    stored = Judgment.objects.get(pk=second.pk)  # the defaults: no comment, no client time, no request id
    assert (stored.quote, stored.client_time_ms, stored.request_id) == ("", None, "")
    item = Item.objects.get(pk=handed.item_id)
    assert (item.num_judgments, item.status, item.label, item.label_origin) == (
        2, Item.Status.AGREED, "Y", Item.Origin.UNANIMOUS)
    assert item.updated_at > before
    assert calls == {"label_final": [campaign.pk], "check_judgment": [
        (first.pk, item.pk, Item.Status.IN_PROGRESS, campaign.pk),
        (second.pk, item.pk, Item.Status.AGREED, campaign.pk)]}
    # a retry returns the judgment already written and runs nothing after it
    assert submit_judgment(theirs.item, b, "Y", URL, now=start + timedelta(seconds=3)).pk == second.pk
    assert len(calls["label_final"]) == 1 and len(calls["check_judgment"]) == 2


@pytest.mark.django_db
def test_a_conflict_is_not_a_final_label(campaign, calls):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    handed = next_item(campaign, a, now=start)
    submit_judgment(handed.item, a, "Y", URL, now=start)
    submit_judgment(next_item(campaign, b, now=start).item, b, "N", "", now=start)
    item = Item.objects.get(pk=handed.item_id)
    assert (item.num_judgments, item.status, item.label) == (2, Item.Status.CONFLICT, "")
    assert calls["label_final"] == [] and len(calls["check_judgment"]) == 2


@pytest.mark.django_db
def test_a_gold_check_is_never_checked_for_consistency_nor_decided(campaign, calls):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    Item.objects.filter(campaign=campaign).update(is_gold=True, gold_answer="Y")
    start = timezone.now()
    handed = next_item(campaign, a, now=start)
    submit_judgment(handed.item, a, "Y", URL, now=start)
    theirs = next_item(campaign, b, now=start)
    assert theirs.item_id == handed.item_id
    submit_judgment(theirs.item, b, "Y", URL, now=start)
    item = Item.objects.get(pk=handed.item_id)
    assert (item.num_judgments, item.status, item.label) == (2, Item.Status.IN_PROGRESS, "")
    assert calls == {"label_final": [], "check_judgment": []}


@pytest.mark.django_db
def test_the_rows_a_submit_reads(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    one = next_item(campaign, a, now=start)
    submit_judgment(one.item, a, "Y", URL, request_id="r1", now=start)
    two = next_item(campaign, a, now=start)
    submit_judgment(two.item, a, "Y", URL, request_id="r2", now=start)
    theirs = next_item(campaign, b, now=start)
    assert theirs.item_id == one.item_id
    submit_judgment(theirs.item, b, "N", URL, request_id="r2", now=start)
    mine = {(j.item_id, j.user_id) for j in Judgment.objects.all()}
    assert mine == {(one.item_id, a.pk), (two.item_id, a.pk), (one.item_id, b.pk)}

    def read(item_id, user, request_id):
        item = Item.objects.get(pk=item_id)
        return {(j.item_id, j.user_id) for j in Judgment.objects.filter(judgments_to_read(item, user, request_id))}

    # the item's judgments, everyone's; with a request id also this user's judgment of that request (any item)
    assert read(one.item_id, b, "") == {(one.item_id, a.pk), (one.item_id, b.pk)}
    assert read(two.item_id, b, "") == {(two.item_id, a.pk)}
    assert read(two.item_id, b, "r2") == {(two.item_id, a.pk), (one.item_id, b.pk)}
    assert read(one.item_id, a, "r2") == {(one.item_id, a.pk), (one.item_id, b.pk), (two.item_id, a.pk)}
    assert read(one.item_id, a, "r9") == {(one.item_id, a.pk), (one.item_id, b.pk)}
    # a gold check: only this user's judgments (of the item, and of the request)
    Item.objects.filter(pk=one.item_id).update(is_gold=True, gold_answer="Y")
    assert read(one.item_id, a, "") == {(one.item_id, a.pk)}
    assert read(one.item_id, b, "") == {(one.item_id, b.pk)}
    assert read(one.item_id, a, "r2") == {(one.item_id, a.pk), (two.item_id, a.pk)}
    assert read(two.item_id, b, "r2") == {(two.item_id, a.pk), (one.item_id, b.pk)}
