"""Writes: campaigns, their items and members."""
from __future__ import annotations

import random

from django.db import IntegrityError, connections, router, transaction

from annotation.lib.evidence import DEFAULT_EVIDENCE_POLICY, EVIDENCE_POLICIES
from annotation.lib.sources import domains_refusal, normalised_domains
from annotation.models import Campaign, Item, Membership, Role, default_allowed_domains
from annotation.selectors.campaigns import forget_roles
from annotation.services.errors import AnnotationError
from annotation.services.templates import ensure_default_templates
from pooling.models import Pool, PoolEntry

ITEM_BATCH = 5000


def create_campaign(
    name: str,
    pool: Pool,
    *,
    description: str = "",
    allowed_domains: list[str] | None = None,
    assignment_timeout_s: int = 1800,
    gold_rate: float = 0.05,
    rushed_factor: float = 0.25,
    evidence_policy: str = DEFAULT_EVIDENCE_POLICY,
    seed: int = 0,
    reuse: bool = True,
) -> Campaign:
    """A campaign over ``pool``: one pending item per pool entry (queue order shuffled with ``seed``) and the
    KG's default question templates (generated where missing). With ``reuse`` every triple already labelled in
    an earlier campaign on the same KG takes over that label (origin reused, ``services/reuse.py``);
    ``annotation.services.reuse.reused_count(campaign)`` tells how many."""
    if Campaign.objects.filter(name=name).exists():
        raise AnnotationError(f"a campaign named {name!r} already exists")
    if not 0 <= gold_rate < 1:
        raise AnnotationError("gold_rate must be in [0, 1)")
    if evidence_policy not in EVIDENCE_POLICIES:
        raise AnnotationError(f"unknown evidence policy {evidence_policy!r}; policies: {', '.join(EVIDENCE_POLICIES)}")
    domains = checked_domains(allowed_domains if allowed_domains is not None else default_allowed_domains())
    rng = random.Random(seed)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name, pool=pool, description=description, allowed_domains=domains,
            assignment_timeout_s=assignment_timeout_s, gold_rate=gold_rate, rushed_factor=rushed_factor,
            evidence_policy=evidence_policy,
        )
        entries = PoolEntry.objects.filter(pool=pool).order_by("pk").values_list("pk", "head_id", "relation_id", "tail_id")
        Item.objects.bulk_create(
            (
                Item(campaign=campaign, entry_id=pk, head_id=h, relation_id=r, tail_id=t, queue_key=rng.randrange(2**31))
                for pk, h, r, t in entries.iterator(chunk_size=ITEM_BATCH)
            ),
            batch_size=ITEM_BATCH,
        )
        ensure_default_templates(pool.sample.kg)
        if reuse:
            from annotation.services.reuse import reuse_labels

            reuse_labels(campaign)
    _refresh_planner_statistics()
    return campaign


def _refresh_planner_statistics() -> None:
    """After a bulk load of items, give PostgreSQL's planner fresh statistics: next_item's queue scans pick
    their index from them, and waiting for autovacuum left the first minutes of a big campaign on slow plans."""
    connection = connections[router.db_for_write(Item)]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(Item._meta.db_table)}")


def add_member(campaign: Campaign, user, role: str) -> Membership:
    """Give ``user`` a role in the campaign (idempotent)."""
    if role not in Role.values:
        raise AnnotationError(f"unknown role {role!r}; roles: {', '.join(Role.values)}")
    forget_roles(campaign)
    try:
        with transaction.atomic():
            membership, _ = Membership.objects.get_or_create(campaign=campaign, user=user, role=role)
    except IntegrityError:  # created concurrently
        membership = Membership.objects.get(campaign=campaign, user=user, role=role)
    return membership


def remove_member(campaign: Campaign, user, role: str) -> None:
    forget_roles(campaign)
    Membership.objects.filter(campaign=campaign, user=user, role=role).delete()


def checked_domains(domains: list[str]) -> list[str]:
    """Verified source domains normalised, without blanks or repeats; refused when none is left (nobody could
    give an acceptable source, so nobody could judge) or one is not a bare domain name."""
    refusal = domains_refusal(domains)
    if refusal:
        raise AnnotationError(refusal)
    return normalised_domains(domains)


def set_allowed_domains(campaign: Campaign, domains: list[str]) -> Campaign:
    cleaned = checked_domains(domains)
    campaign.allowed_domains = cleaned
    campaign.save(update_fields=["allowed_domains"])
    return campaign


#: Campaign settings a campaign file or the API may change, with their checks (domains, order and budget have
#: their own services: ``set_allowed_domains``, ``judging_order.set_judging_order``).
SETTINGS = ("description", "assignment_timeout_s", "gold_rate", "rushed_factor", "gold_threshold", "evidence_policy")


def update_settings(campaign: Campaign, **values: object) -> list[str]:
    """Change the campaign's plain settings (``SETTINGS``); returns the names of those that changed."""
    unknown = set(values) - set(SETTINGS)
    if unknown:
        raise AnnotationError(f"unknown campaign setting {sorted(unknown)[0]!r}; settings: {', '.join(SETTINGS)}")
    checks = {
        "description": lambda v: isinstance(v, str),
        "assignment_timeout_s": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 2**31 - 1,
        "gold_rate": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1,
        "rushed_factor": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1e6,
        "gold_threshold": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1,
        "evidence_policy": lambda v: v in EVIDENCE_POLICIES,
    }
    changed = []
    for name, value in values.items():
        if not checks[name](value):
            raise AnnotationError(f"invalid value for {name}: {value!r}")
        if getattr(campaign, name) != value:
            setattr(campaign, name, value)
            changed.append(name)
    if changed:
        campaign.save(update_fields=changed)
    return changed


def add_pool_items(campaign: Campaign, *, seed: int = 0) -> int:
    """Items for the pool entries that have none yet (after the pool grew): pending, queued in random order
    (``seed``; an adaptive order re-keys them), labels reused from earlier campaigns as at creation. Entries
    whose triple is already a gold check of the campaign get no item (the unique triple). Returns the number
    of items added."""
    from annotation.services.judging_order import rekey_queue
    from annotation.services.reuse import reuse_labels

    before = Item.objects.filter(campaign=campaign).count()
    rng = random.Random(f"{seed}:{campaign.pk}:{before}")
    with transaction.atomic():
        new = PoolEntry.objects.filter(pool=campaign.pool_id).exclude(items__campaign=campaign).order_by("pk")
        Item.objects.bulk_create(
            (Item(campaign=campaign, entry_id=pk, head_id=h, relation_id=r, tail_id=t, queue_key=rng.randrange(2**31))
             for pk, h, r, t in new.values_list("pk", "head_id", "relation_id", "tail_id").iterator(chunk_size=ITEM_BATCH)),
            batch_size=ITEM_BATCH, ignore_conflicts=True,
        )
        added = Item.objects.filter(campaign=campaign).count() - before
        reuse_labels(campaign)
    if added and campaign.judging_order != "random":
        rekey_queue(campaign, force=True)
    if added:
        _refresh_planner_statistics()
    return added
