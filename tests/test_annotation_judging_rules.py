"""submit_judgment's rules, case by case (issue 19: each rule's mutants): the accepted spellings, the hand-out
that must be open and unexpired (to the millisecond), the times on task and their bounds, retries, the sources
the evidence policy lets go, and the whole refusal messages."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Judgment, Role
from annotation.services.distribution import next_item, skip_item
from annotation.services.errors import AlreadyJudged, AnnotationError, InvalidSource, NotAssigned
from annotation.services.answers import parse_answer
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users
from tests._raises_support import whole

URL = "https://en.wikipedia.org/wiki/Jeremy_Irons"


@pytest.fixture
def campaign(tmp_path):
    return star_campaign(tmp_path, items=3, assignment_timeout_s=60, allowed_domains=["wikipedia.org"])


def test_accepted_spellings():
    for spelling in ("y", "Y", " yes ", "TRUE", True):
        assert parse_answer(spelling) == "Y"
        assert parse_answer(spelling, cant_tell=True) == "Y"
    for spelling in ("n", "No", "false", False):
        assert parse_answer(spelling) == "N"
    for spelling in ("c", "cant_tell", "can't tell", "Cant Tell", " ? "):
        assert parse_answer(spelling, cant_tell=True) == "C"
        with pytest.raises(AnnotationError, match=whole(f"the answer must be Y or N, not {spelling!r}")):
            parse_answer(spelling)
    with pytest.raises(AnnotationError, match=whole("the answer must be Y, N or C (can't tell), not 'maybe'")):
        parse_answer("maybe", cant_tell=True)
    with pytest.raises(AnnotationError, match=whole("the answer must be Y or N, not ''")):
        parse_answer("")


@pytest.mark.django_db
def test_refusals_in_whole(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    mine = next_item(campaign, a, now=start)
    with pytest.raises(NotAssigned, match=whole(f"item {mine.item_id} was not handed to {b}")):
        submit_judgment(mine.item, b, "Y", URL, now=start)
    for blank in ("", "   "):
        with pytest.raises(AnnotationError, match=whole("say why you can't tell: a comment is required with \"can't tell\"")):
            submit_judgment(mine.item, a, "C", URL, quote=blank, now=start)
    with pytest.raises(InvalidSource, match=whole("a source URL is required")):
        submit_judgment(mine.item, a, "Y", "  ", now=start)
    with pytest.raises(InvalidSource, match=whole(
            "example.com is not a verified source of this campaign (allowed: wikipedia.org)")):
        submit_judgment(mine.item, a, "N", "https://example.com/x", now=start)  # a source given is checked
    skip_item(mine.item, a)
    with pytest.raises(NotAssigned, match=whole(f"the hand-out of item {mine.item_id} to {a} is skipped; ask for new work")):
        submit_judgment(mine.item, a, "Y", URL, now=start)
    assert not Judgment.objects.exists()


@pytest.mark.django_db
def test_a_hand_out_expires_at_its_expiry_to_the_millisecond(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    mine = next_item(campaign, a, now=start)
    theirs = next_item(campaign, b, now=start)
    expiry = start + timedelta(seconds=60)
    with pytest.raises(NotAssigned, match=whole(f"the hand-out of item {theirs.item_id} to {b} expired; ask for new work")):
        submit_judgment(theirs.item, b, "Y", URL, now=expiry)
    judgment = submit_judgment(mine.item, a, "Y", URL, now=expiry - timedelta(milliseconds=1))
    assert judgment.time_on_task_ms == 59_999


@pytest.mark.django_db
def test_times_on_task_are_bounded(campaign):
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    start = timezone.now()
    first = next_item(campaign, a, now=start)
    # the client's figure is kept, never above the server's, never below 0
    judgment = submit_judgment(first.item, a, "N", "", client_time_ms=9000, now=start + timedelta(seconds=2))
    assert (judgment.time_on_task_ms, judgment.client_time_ms, judgment.source_url) == (2000, 2000, "")
    second = next_item(campaign, b, now=start)
    judgment = submit_judgment(second.item, b, "N", " ", client_time_ms=-5, quote="  in the infobox ",
                               now=start + timedelta(milliseconds=1500, microseconds=700))  # whole ms
    assert (judgment.time_on_task_ms, judgment.client_time_ms, judgment.quote) == (1500, 0, "in the infobox")
    assert judgment.source_domain == ""
    # a clock behind the hand-out: 0, not a negative time; no client figure stays None
    third = next_item(campaign, c, now=start)
    judgment = submit_judgment(third.item, c, "Y", URL, client_time_ms=1234.9, now=start - timedelta(seconds=3))
    assert (judgment.time_on_task_ms, judgment.client_time_ms) == (0, 0)


@pytest.mark.django_db
def test_a_time_on_task_beyond_the_column_is_capped(tmp_path):
    campaign = star_campaign(tmp_path, items=1, assignment_timeout_s=30 * 24 * 3600)
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    start = timezone.now()
    handed = next_item(campaign, a, now=start)
    judgment = submit_judgment(handed.item, a, "Y", URL, now=start + timedelta(days=25))
    judgment.refresh_from_db()
    assert (judgment.time_on_task_ms, judgment.client_time_ms) == (2**31 - 1, None)


@pytest.mark.django_db
def test_retries_and_changes(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    start = timezone.now()
    handed = next_item(campaign, a, now=start)
    first = submit_judgment(handed.item, a, "Y", URL + "#Life", request_id=" r1 ", now=start)
    assert first.request_id == "r1"
    assert submit_judgment(handed.item, a, "Y", URL, now=start).pk == first.pk  # same answer and source
    assert submit_judgment(handed.item, a, "Y", "", request_id="r1", now=start).pk == first.pk  # same request
    already = f"{a} already judged item {handed.item_id} (Y); a judgment cannot be changed"
    with pytest.raises(AlreadyJudged, match=whole(already)) as refused:  # the same id, another answer: no retry
        submit_judgment(handed.item, a, "N", "", request_id="r1", now=start)  # (a second tab of the same page)
    assert refused.value.answer == "Y"
    with pytest.raises(AlreadyJudged, match=whole(already)):
        submit_judgment(handed.item, a, "Y", "https://de.wikipedia.org/wiki/Jeremy_Irons", now=start)
    with pytest.raises(AlreadyJudged, match=whole(already)):
        submit_judgment(handed.item, a, "N", URL, now=start)
    other = next_item(campaign, a, now=start)
    with pytest.raises(AnnotationError, match=whole("request id 'r1' was already used for another item")):
        submit_judgment(other.item, a, "Y", URL, request_id="r1", now=start)
    # another user's request id is theirs: b's r1 is a new judgment
    theirs = next_item(campaign, b, now=start)
    assert theirs.item_id == handed.item_id
    second = submit_judgment(theirs.item, b, "Y", URL, request_id="r1", now=start)
    assert second.pk != first.pk
    item = Item.objects.get(pk=handed.item_id)
    assert (item.num_judgments, item.status, item.label) == (2, Item.Status.AGREED, "Y")
    assert Assignment.objects.get(pk=theirs.pk).closed_at == start
