"""Builders for the judgment-history, protection and backup tests (issue 13): a campaign in which every kind of
judged data exists. Not used at runtime."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Assignment, Campaign, Item, Role
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.audit import apply_expert_labels, draw_audit_sample, next_audit_item, submit_audit
from annotation.services.campaigns import add_member, create_campaign
from annotation.services.distribution import next_item, skip_item
from annotation.services.gold import add_gold_items
from annotation.services.judging import submit_judgment
from annotation.services.label_edits import edit_judgment
from tests._pool_support import import_umls, train_tiny

URL = "https://en.wikipedia.org/wiki/X"


@dataclass
class Judged:
    campaign: Campaign
    annotators: list  # a, b, c
    adjudicator: object
    expert: object
    admin: object


def users(campaign: Campaign, prefix: str) -> Judged:
    User = get_user_model()

    def make(name: str, *roles: str):
        user = User.objects.create_user(f"{prefix}-{name}", email=f"{name}@example.org", first_name=name.title())
        for role in roles:
            add_member(campaign, user, role)
        return user

    annotators = [make(n, Role.ANNOTATOR) for n in ("ann", "bob", "cid")]
    return Judged(campaign, annotators, make("ada", Role.ADJUDICATOR), make("eve", Role.EXPERT),
                  make("root", Role.ADMIN))


def answer(item: Item, user) -> str:
    """Deterministic answers: the two first annotators disagree on every third item."""
    if item.is_gold:
        return item.gold_answer
    base = "Y" if item.queue_key % 2 else "N"
    flip = user.username.endswith("-bob") and item.queue_key % 3 == 0
    return ("N" if base == "Y" else "Y") if flip else base


def judged_umls_campaign(name: str = "hist", *, items_to_judge: int = 8) -> Judged:
    """UMLS, one tiny trained system, a 4-triple sample, a depth-2 pool, gold checks, then: ``items_to_judge``
    items judged twice (some conflicts, one adjudicated), an expert audit of 2 items with the expert's labels
    applied, a skip, an open hand-out, an expired-and-released hand-out and an admin's correction of a judgment.
    Needs the ``storage`` fixture (tests._pool_support)."""
    from pooling.services.pools import build_pool_now, create_pool
    from pooling.services.samples import draw_sample

    kg = import_umls(f"{name}-umls")
    system = train_tiny(kg, "distmult", name=f"{name}-dm", epochs=2)
    sample = draw_sample(kg, size=4, seed=0, name="s4")
    pool = build_pool_now(create_pool(sample, [system], depth=2, chunk_size=64))
    campaign = create_campaign(name, pool, gold_rate=0.1)
    add_gold_items(campaign, seed=1)
    people = users(campaign, name)
    ann, bob, cid = people.annotators
    now = timezone.now()
    for _round in range(items_to_judge):
        for user in (ann, bob):
            handed = next_item(campaign, user, now=now)
            submit_judgment(handed.item, user, answer(handed.item, user), URL, now=now)
            now += timedelta(seconds=7)
    skipped = next_item(campaign, cid, now=now)
    skip_item(skipped.item, cid, now=now)
    expired = next_item(campaign, cid, now=now)  # expires, then released by the next call
    now += timedelta(seconds=campaign.assignment_timeout_s + 10)
    next_item(campaign, cid, now=now)  # cid's open hand-out, left open
    assert Assignment.objects.get(pk=expired.pk).state == Assignment.State.EXPIRED
    conflict = next_adjudication(campaign, people.adjudicator, now=now)
    if conflict is not None:
        adjudicate(conflict.item, people.adjudicator, "Y", "the source says so", now=now)
    draw_audit_sample(campaign, size=2, seed=0, now=now)
    while (task := next_audit_item(campaign, people.expert, now=now)) is not None:
        item = Item.objects.get(pk=task.item_id)
        submit_audit(item, people.expert, "N" if item.label == "Y" else "Y", comment="checked", now=now)
    apply_expert_labels(campaign)
    first = campaign.items.filter(judgments__isnull=False, is_gold=False).order_by("pk").first().judgments.first()
    edit_judgment(first, by=people.admin, note="typo in the source", source_url=URL + "_2")
    return people


def wipe(campaign: Campaign) -> None:
    """Remove the campaign and everything under it (KG, users) as if restoring into an empty instance."""
    from annotation.services.campaign_archive import purge_campaign
    from tests._annotation_support import delete_kg

    kg = campaign.pool.sample.kg
    user_ids = set(campaign.memberships.values_list("user_id", flat=True))
    purge_campaign(campaign)
    delete_kg(kg)
    get_user_model().objects.filter(pk__in=user_ids).delete()


def archive_members(path) -> dict[str, bytes]:
    """The members of a backup file (the manifest apart: it holds the time of the backup)."""
    from annotation.services.backup_format import Archive

    return Archive(path).members
