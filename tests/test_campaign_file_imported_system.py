"""A campaign file can declare a system imported from a score matrix (issue 17): adding it to the file of a running
campaign imports it on the sample and grows the pool with its candidates (more systems, same depth), judgments
kept; its pool entries are exactly those of a fresh build with both systems."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.lib.campaign_file import parse_campaign_file
from annotation.models import Campaign, Item
from annotation.services.campaign_apply import apply_campaign, plan_campaign
from annotation.services.distribution import next_item
from annotation.services.judging import submit_judgment
from pooling.models import PoolEntry, System
from pooling.services.pools import build_pool_now, create_pool
from tests._campaign_file_support import write_campaign
from tests._pool_support import storage  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_adding_a_score_matrix_system_grows_the_pool(storage, tmp_path):  # noqa: F811
    apply_campaign(parse_campaign_file(write_campaign(tmp_path, depth=2)))
    campaign = Campaign.objects.get(name="cf")
    sample, kg = campaign.pool.sample, campaign.pool.sample.kg
    ann = campaign.members.get(username="cf-ann")
    judged = next_item(campaign, ann)
    submit_judgment(judged.item, ann, "Y", "https://en.wikipedia.org/wiki/X")
    scores = np.random.default_rng(0).normal(size=(sample.questions.count(), kg.num_entities)).astype(np.float32)
    np.save(tmp_path / "random.npy", scores)
    extra = '\n[[systems]]\nname = "random"\nscores = "random.npy"\n'
    path = write_campaign(tmp_path, depth=2, pool_systems=("distmult", "random"))
    path.write_text(path.read_text().replace("[sample]", extra + "\n[sample]"))

    plan = plan_campaign(parse_campaign_file(path))
    assert [a.line() for a in plan.changes if a.subject.startswith(("system", "pool"))] == [
        f"+ system random: import the score matrix {tmp_path / 'random.npy'}",
        "~ pool depth2-distmult: grow: add random; judged items are kept, new candidates become items"]
    apply_campaign(parse_campaign_file(path))
    campaign.refresh_from_db()
    assert System.objects.get(kg=kg, name="random").origin == System.Origin.IMPORTED
    assert campaign.pool.name == "depth2-distmult+random"
    reference = build_pool_now(create_pool(sample, list(System.objects.filter(kg=kg).order_by("name")), depth=2,
                                           name="reference"))
    triples = lambda pool: set(PoolEntry.objects.filter(pool=pool).values_list(  # noqa: E731
        "head_id", "relation_id", "tail_id", "depth"))
    assert triples(campaign.pool) == triples(reference)
    assert Item.objects.get(pk=judged.item_id).judgments.get().answer == "Y"
    assert Item.objects.filter(campaign=campaign, is_gold=False).count() == PoolEntry.objects.filter(
        pool=campaign.pool).count()
    assert plan_campaign(parse_campaign_file(path)).changes == []


def test_a_missing_run_file_is_refused_by_the_plan(storage, tmp_path):  # noqa: F811
    """It was planned as an import, and the apply failed (found from outside); a missing sample file was
    refused by the plan already."""
    extra = '\n[[systems]]\nname = "ext"\nrun = "nofile.trec"\n'
    path = write_campaign(tmp_path, depth=2, pool_systems=("distmult", "ext"))
    path.write_text(path.read_text().replace("[sample]", extra + "\n[sample]"))
    plan = plan_campaign(parse_campaign_file(path))
    assert [(r.subject, r.detail) for r in plan.refusals] == [("system ext", f"no file {tmp_path / 'nofile.trec'}")]
