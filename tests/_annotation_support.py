"""Small builders for tests of the annotation app (tiny KGs, pools, campaigns and users). Not used at runtime."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model

from annotation.models import Campaign
from annotation.services.campaigns import add_member, create_campaign
from pooling.models import Entity, KnowledgeGraph, Pool, PoolEntry, Relation
from pooling.services.kg_import import import_kg
from pooling.services.samples import create_sample

Triple = tuple[str, str, str]


def write_kg(folder: Path, train: list[Triple], valid: list[Triple], test: list[Triple]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", train), ("valid", valid), ("test", test)):
        (folder / f"{split}.txt").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows), encoding="utf-8")
    return folder


def tiny_pool(
    folder: Path, *, name: str = "tiny", train: list[Triple], test: list[Triple], entries: list[Triple],
    valid: list[Triple] | None = None,
) -> Pool:
    """Import a KG from the triples, sample all its test triples, and pool ``entries`` (no hits, depth 1)."""
    if not valid:  # the importer wants three non-empty splits
        train, valid = train[:-1], train[-1:]
    kg = import_kg(name, write_kg(folder / name, train, valid, test))
    from pooling.selectors.kg import kg_triples

    stored = kg_triples(kg)["test"]
    sample = create_sample(kg, name="all", method="file", seed=None, indices=list(range(len(stored))))
    pool = Pool.objects.create(sample=sample, name="pool", depth=10, origin=Pool.Origin.IMPORTED, status=Pool.Status.DONE)
    entity = dict(Entity.objects.filter(kg=kg).values_list("key", "pk"))
    relation = dict(Relation.objects.filter(kg=kg).values_list("key", "pk"))
    PoolEntry.objects.bulk_create(
        [PoolEntry(pool=pool, head_id=entity[h], relation_id=relation[r], tail_id=entity[t], depth=1) for h, r, t in entries]
    )
    return pool


def star_campaign(folder: Path, *, items: int, name: str = "star", **options) -> Campaign:
    """A campaign of ``items`` entries (e0, likes, eK) over a tiny KG with an N-N relation ``likes``."""
    n = items + 5
    train = [(f"e{i}", "likes", f"e{(i + j) % n}") for i in range(n) for j in (1, 2)]
    test = [("e0", "likes", "e1")]
    train = [t for t in train if t != test[0]]
    entries = [("e0", "likes", f"e{k}") for k in range(2, n) if ("e0", "likes", f"e{k}") not in train]
    entries += [(f"e{k}", "likes", "e1") for k in range(3, n) if (f"e{k}", "likes", "e1") not in train]
    pool = tiny_pool(folder, name=f"{name}-kg", train=train, test=test, entries=entries[:items])
    assert PoolEntry.objects.filter(pool=pool).count() == items, "not enough distinct entries"
    return create_campaign(name, pool, **options)


def users(campaign: Campaign, role: str, count: int, prefix: str | None = None) -> list:
    User = get_user_model()
    prefix = prefix or role
    made = []
    for i in range(count):
        user, _ = User.objects.get_or_create(username=f"{campaign.name}-{prefix}{i}")
        add_member(campaign, user, role)
        made.append(user)
    return made


def delete_kg(kg: KnowledgeGraph) -> None:
    """Remove a KG with its campaigns (for module-scoped fixtures outside a test transaction)."""
    from django.db import connection

    from pooling.models import Sample, Triple

    if connection.vendor == "postgresql":
        # Deleting entities makes PostgreSQL look up the rows referencing each one. Tables loaded within the test
        # run have no statistics yet (autovacuum is slow to come under load), so those lookups were planned as
        # sequential scans: one per deleted entity, over 10 minutes for FB15k-237.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    Campaign.objects.filter(pool__sample__kg=kg).delete()
    Pool.objects.filter(sample__kg=kg).delete()
    Sample.objects.filter(kg=kg).delete()
    kg.question_templates.all().delete()
    for model in (Triple, Entity, Relation):
        model.objects.filter(kg=kg)._raw_delete(model.objects.db)
    KnowledgeGraph.objects.filter(pk=kg.pk).delete()


class Clock:
    """A clock a test moves by hand: ``install`` patches ``django.utils.timezone.now``, which the services,
    the views and the models' auto_now fields all read, so hand-outs expire and times on task pass exactly
    as the test says."""

    def __init__(self, start: datetime | None = None):
        from django.utils import timezone

        self.now = start or timezone.now()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float = 0, *, ms: float = 0) -> datetime:
        self.now += timedelta(seconds=seconds, milliseconds=ms)
        return self.now

    def install(self, monkeypatch) -> Clock:
        from django.utils import timezone

        monkeypatch.setattr(timezone, "now", self)
        return self
