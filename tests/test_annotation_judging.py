"""submit_judgment: only handed-out items, idempotent retries, agreement and conflicts, sources."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Item, Judgment, Role
from annotation.services.distribution import next_item, release_expired, skip_item
from annotation.services.errors import AlreadyJudged, AnnotationError, InvalidSource, NotAssigned
from annotation.services.judging import submit_judgment
from tests._annotation_support import star_campaign, users

URL = "https://en.wikipedia.org/wiki/Jeremy_Irons#Life"


@pytest.fixture
def campaign(tmp_path):
    return star_campaign(tmp_path, items=3, assignment_timeout_s=60)


@pytest.mark.django_db
def test_cannot_submit_for_an_item_not_handed_out(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    mine = next_item(campaign, a)
    with pytest.raises(NotAssigned):
        submit_judgment(mine.item, b, "Y", URL)
    skip_item(mine.item, a)
    with pytest.raises(NotAssigned, match="skipped"):
        submit_judgment(mine.item, a, "Y", URL)
    assert Judgment.objects.count() == 0


@pytest.mark.django_db
def test_expired_and_released_hand_out_cannot_be_answered(campaign):
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    now = timezone.now()
    mine = next_item(campaign, a, now=now)
    # expired but not yet released: closed all the same, the answer is refused
    late = now + timedelta(seconds=90)
    (b,) = users(campaign, Role.ANNOTATOR, 1, prefix="b")
    other = next_item(campaign, b, now=now)
    with pytest.raises(NotAssigned, match="expired"):
        submit_judgment(other.item, b, "N", URL, now=late)
    release_expired(campaign, now=late)
    with pytest.raises(NotAssigned, match="expired"):
        submit_judgment(mine.item, a, "Y", URL, now=late)


@pytest.mark.django_db
def test_double_submit_records_one_judgment(campaign):
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    handed_at = timezone.now()
    assignment = next_item(campaign, a, now=handed_at)
    first = submit_judgment(assignment.item, a, "Y", URL, request_id="req-1", client_time_ms=3000,
                            now=handed_at + timedelta(seconds=4))
    assert submit_judgment(assignment.item, a, "Y", URL, request_id="req-1").pk == first.pk
    assert submit_judgment(assignment.item, a, "yes", URL).pk == first.pk  # same item, same answer: a retry
    with pytest.raises(AlreadyJudged):
        submit_judgment(assignment.item, a, "N", URL)
    with pytest.raises(AnnotationError, match="request id"):
        other = next_item(campaign, a)
        submit_judgment(other.item, a, "Y", URL, request_id="req-1")
    item = Item.objects.get(pk=assignment.item_id)
    assert (Judgment.objects.filter(item=item).count(), item.num_judgments, item.num_active) == (1, 1, 1)
    assert (first.time_on_task_ms, first.client_time_ms) == (4000, 3000) and first.source_url == "https://en.wikipedia.org/wiki/Jeremy_Irons"
    assert first.source_domain == "wikipedia.org"


@pytest.mark.django_db
def test_agreement_and_conflict(campaign):
    a, b = users(campaign, Role.ANNOTATOR, 2)
    x = next_item(campaign, a)
    submit_judgment(x.item, a, "Y", URL)
    assert Item.objects.get(pk=x.item_id).status == Item.Status.IN_PROGRESS
    y = next_item(campaign, b)
    assert y.item_id == x.item_id
    submit_judgment(y.item, b, "Y", "http://www.imdb.com/name/nm0000460/")
    item = Item.objects.get(pk=x.item_id)
    assert (item.status, item.label, item.label_origin) == ("agreed", "Y", "unanimous")

    x = next_item(campaign, a)
    submit_judgment(x.item, a, "Y", URL)
    y = next_item(campaign, b)
    submit_judgment(y.item, b, "N", URL)
    item = Item.objects.get(pk=x.item_id)
    assert (item.status, item.label, item.label_origin) == ("conflict", "", "")


@pytest.mark.django_db
def test_source_must_be_on_the_allow_list(campaign):
    (a,) = users(campaign, Role.ANNOTATOR, 1)
    assignment = next_item(campaign, a)
    for bad, message in (
        ("ftp://en.wikipedia.org/x", "http and https"),
        ("https://example.com/x", "not a verified source"),
        ("https://notwikipedia.org/x", "not a verified source"),
        ("", "required"),
    ):
        with pytest.raises(InvalidSource, match=message):
            submit_judgment(assignment.item, a, "Y", bad)
    assert Judgment.objects.count() == 0
