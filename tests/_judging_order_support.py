"""Builders for tests of judging orders on the live queue (issue 20): a star campaign whose pool entries carry
system hits. Not used at runtime."""
from __future__ import annotations

from pathlib import Path

from annotation.models import Campaign, Item
from pooling.models import PoolEntry, PoolHit, Question, System
from tests._annotation_support import star_campaign


def campaign_with_runs(folder: Path, runs: dict[str, int], *, name: str = "runs", **options) -> tuple[Campaign, dict]:
    """A campaign whose pool is the union of ``runs``: system name -> how many items it retrieves (ranks 1..k,
    disjoint items, entries in pk order). Returns (campaign, {(system, rank): Item})."""
    total = sum(runs.values())
    campaign = star_campaign(folder, items=total, name=name, **options)
    pool = campaign.pool
    kg = pool.sample.kg
    question = Question.objects.filter(sample=pool.sample).order_by("position").first()
    entries = list(PoolEntry.objects.filter(pool=pool).order_by("pk"))
    items = {item.entry_id: item for item in Item.objects.filter(campaign=campaign)}
    by_run = {}
    position = 0
    for system_name, count in runs.items():
        system = System.objects.create(kg=kg, name=system_name, origin=System.Origin.IMPORTED,
                                       status=System.Status.READY, architecture=system_name.split("-")[0])
        pool.systems.add(system)
        for rank in range(1, count + 1):
            entry = entries[position]
            position += 1
            PoolHit.objects.create(entry=entry, system=system, question=question, rank=rank)
            PoolEntry.objects.filter(pk=entry.pk).update(depth=rank, num_systems=1)
            by_run[(system_name, rank)] = items[entry.pk]
    return campaign, by_run
