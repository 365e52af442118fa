"""The create_campaign command: members by role, and an unknown user leaves nothing behind (issue 19)."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Item, Membership
from tests._annotation_support import tiny_pool

pytestmark = pytest.mark.django_db

TRAIN = [("a", "likes", "b"), ("b", "likes", "c")]
TEST = [("a", "likes", "c")]
ENTRIES = [("a", "likes", "a"), ("c", "likes", "b")]


@pytest.fixture
def pool_ref(tmp_path) -> str:
    pool = tiny_pool(tmp_path, name="cmd-kg", train=TRAIN, test=TEST, entries=ENTRIES)
    User = get_user_model()
    for name in ("alice", "bob"):
        User.objects.create_user(name, password="x")
    return f"{pool.sample.kg.name}/{pool.sample.name}/{pool.name}"


def test_unknown_member_fails_and_leaves_no_campaign(pool_ref):
    with pytest.raises(CommandError, match="'ghost'") as info:
        call_command("create_campaign", "c1", pool_ref, "--annotator", "alice", "--annotator", "ghost",
                     "--admin", "nobody", stdout=io.StringIO())
    assert "'nobody'" in str(info.value)  # every missing name at once
    assert not Campaign.objects.filter(name="c1").exists()
    assert not Item.objects.exists() and not Membership.objects.exists()
    # the same name works afterwards: nothing half-made is in the way
    out = io.StringIO()
    call_command("create_campaign", "c1", pool_ref, "--annotator", "alice", "--annotator", "bob",
                 "--admin", "bob", "--timeout", "60", stdout=out)
    campaign = Campaign.objects.get(name="c1")
    assert campaign.assignment_timeout_s == 60 and campaign.items.count() >= len(ENTRIES)
    assert set(Membership.objects.filter(campaign=campaign).values_list("user__username", "role")) == {
        ("alice", "annotator"), ("bob", "annotator"), ("bob", "admin")}
    assert out.getvalue().startswith("campaign c1: ")
