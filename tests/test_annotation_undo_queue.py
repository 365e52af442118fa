"""After an undo the item is back in the queue as it was before the answer (issue 15): the author's hand-out is
open again (so nobody else takes the place), double annotation still caps it, and if the author lets it lapse
it returns to the others like any expired hand-out."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Role
from annotation.services.distribution import next_item, release_expired
from annotation.services.item_state import find_inconsistent_items
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


def test_the_undone_item_keeps_its_place_under_double_annotation(tmp_path):
    campaign = star_campaign(tmp_path, items=1)
    a, b, c = users(campaign, Role.ANNOTATOR, 3)
    now = timezone.now()
    submit_judgment(next_item(campaign, a, now=now).item, a, "Y", URL, now=now)
    second = submit_judgment(next_item(campaign, b, now=now).item, b, "N", URL, now=now)
    assert Item.objects.get().status == "conflict"
    reopened = undo_judgment(second, b, now=now)
    assert (reopened.state, reopened.expires_at) == ("open", now + timedelta(seconds=campaign.assignment_timeout_s))
    assert next_item(campaign, c, now=now) is None  # a's answer + b's open hand-out: two of two
    later = now + timedelta(seconds=campaign.assignment_timeout_s + 1)
    release_expired(campaign, now=later)  # b let it lapse: back to the others, never to b again
    assert Assignment.objects.get(pk=reopened.pk).state == Assignment.State.EXPIRED
    assert next_item(campaign, b, now=later) is None
    third = next_item(campaign, c, now=later)
    assert third is not None and third.item_id == second.item_id
    submit_judgment(third.item, c, "Y", URL, now=later)
    item = Item.objects.get()
    assert (item.status, item.label, item.num_judgments) == ("agreed", "Y", 2)
    assert find_inconsistent_items(campaign) == []


def test_an_undo_while_holding_another_item_serves_both(tmp_path):
    campaign = star_campaign(tmp_path, items=2)
    a, = users(campaign, Role.ANNOTATOR, 1)
    now = timezone.now()
    answered = submit_judgment(next_item(campaign, a, now=now).item, a, "N", URL, now=now)
    current = next_item(campaign, a, now=now + timedelta(seconds=1))  # on screen when Backspace is pressed
    reopened = undo_judgment(answered, a, now=now + timedelta(seconds=2))
    assert reopened.item_id == answered.item_id != current.item_id
    assert set(Assignment.objects.filter(user=a, state="open").values_list("pk", flat=True)) == {current.pk, reopened.pk}
    submit_judgment(reopened.item, a, "Y", URL, now=now + timedelta(seconds=3))
    assert next_item(campaign, a, now=now + timedelta(seconds=4)).pk == current.pk
    assert find_inconsistent_items(campaign) == []
