"""A deeper pool in the campaign file grows the campaign's pool in place (issue 17): every judged item keeps its id,
judgments and label, the new candidates become items, labels an earlier campaign on the KG decided are reused for
them, and the grown pool is exactly the pool a fresh build at the new depth gives. A shallower depth is refused
with nothing written."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotation.lib.campaign_file import parse_campaign_file
from annotation.models import Campaign, Item, Judgment
from annotation.services.campaign_apply import apply_campaign, plan_campaign
from annotation.services.campaigns import create_campaign
from annotation.services.distribution import next_item
from annotation.services.imports import import_judgments
from annotation.services.judging import submit_judgment
from pooling.models import PoolEntry, System
from pooling.services.pools import build_pool_now, create_pool
from tests._campaign_file_support import write_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
URL = "https://en.wikipedia.org/wiki/X"


def entries(pool) -> dict[tuple[str, str, str], int | None]:
    return {(h, r, t): d for h, r, t, d in PoolEntry.objects.filter(pool=pool).values_list(
        "head__key", "relation__key", "tail__key", "depth")}


def judged_state(campaign) -> dict[int, tuple]:
    return {item.pk: (item.entry_id, item.status, item.label, item.label_origin,
                      tuple(item.judgments.order_by("pk").values_list("pk", "user__username", "answer")))
            for item in Item.objects.filter(campaign=campaign, judgments__isnull=False).distinct()}


def test_a_deeper_pool_keeps_every_judgment_and_reuses_earlier_labels(storage, tmp_path):  # noqa: F811
    shallow = write_campaign(tmp_path, depth=2)
    apply_campaign(parse_campaign_file(shallow))
    campaign = Campaign.objects.get(name="cf")
    old_pool = entries(campaign.pool)
    old_entry_pks = set(PoolEntry.objects.filter(pool=campaign.pool).values_list("pk", flat=True))
    ann, bob = (campaign.members.get(username=u) for u in ("cf-ann", "cf-bob"))
    for _ in range(4):  # four items judged by both (gold checks included, as they come)
        for user, answer in ((ann, "Y"), (bob, "N")):
            handed = next_item(campaign, user)
            submit_judgment(handed.item, user, answer, URL)
    before = judged_state(campaign)
    assert len(before) >= 4 and Judgment.objects.filter(item__campaign=campaign).count() == 8

    # an earlier campaign on the same KG and sample, over the depth-4 pool, with a few labels decided
    system = System.objects.get(kg__name="cf-umls", name="distmult")
    reference = build_pool_now(create_pool(campaign.pool.sample, [system], depth=4, name="reference"))
    earlier = create_campaign("earlier", reference)
    deep_only = sorted(set(entries(reference)) - set(old_pool))[:5]
    assert len(deep_only) == 5
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{h}\t{r}\t{t}\t{'Y' if n % 2 else 'N'}\n" for n, (h, r, t) in enumerate(deep_only)))
    assert import_judgments(earlier, labels).labelled == 5

    deeper = write_campaign(tmp_path, depth=4)
    plan = plan_campaign(parse_campaign_file(deeper))
    assert [a.line() for a in plan.changes if a.subject.startswith("pool")] == [
        "~ pool depth2-distmult: grow: depth 2 -> 4; judged items are kept, new candidates become items"]
    out = io.StringIO()
    call_command("campaign", "apply", str(deeper), stdout=out)
    campaign.refresh_from_db()
    pool = campaign.pool
    assert pool.depth == 4 and pool.name == "depth4-distmult"  # a default name follows the depth

    assert entries(pool) == entries(reference)  # = a fresh build at depth 4
    assert old_entry_pks <= set(PoolEntry.objects.filter(pool=pool).values_list("pk", flat=True))
    assert judged_state(campaign) == before
    items = Item.objects.filter(campaign=campaign, is_gold=False)
    assert items.count() == PoolEntry.objects.filter(pool=pool).count()
    reused = {(i.head.key, i.relation.key, i.tail.key): i.label
              for i in items.filter(label_origin=Item.Origin.REUSED).select_related("head", "relation", "tail")}
    assert reused == {triple: "Y" if n % 2 else "N" for n, triple in enumerate(deep_only)}
    assert f"~ campaign cf: {len(entries(reference)) - len(old_pool)} new pool candidates become items" in out.getvalue()
    assert plan_campaign(parse_campaign_file(deeper)).changes == []

    shallower = write_campaign(tmp_path, depth=3)
    with pytest.raises(CommandError, match="depth 4 -> 3 would drop candidates"):
        call_command("campaign", "apply", str(shallower), stdout=io.StringIO())
    assert entries(pool) == entries(reference) and judged_state(campaign) == before
