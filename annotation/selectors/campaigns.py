"""Reads: campaigns, pools by reference, roles, progress."""
from __future__ import annotations

from django.db.models import F, FilteredRelation, Q, QuerySet

from annotation.models import Campaign, Item, Membership, Role
from annotation.selectors.item_counts import ItemCounts, item_counts
from pooling.models import Pool


#: left out of the campaign rows that every page and API request loads: a KG's type labels can be large (530 KB of
#: JSON for CoDEx, parsed per row) and no page reads them; one that does loads them then (QuerySet.defer)
DEFERRED_PER_REQUEST = ("pool__sample__kg__type_labels",)


def campaign_by_ref(ref: str | int) -> Campaign:
    """A campaign by name or numeric id; Campaign.DoesNotExist lists the known names."""
    ref = str(ref)
    campaigns = Campaign.objects.select_related("pool__sample__kg")
    found = campaigns.filter(name=ref).first()
    if found is None and ref.isdigit():
        found = campaigns.filter(pk=int(ref)).first()
    if found is None:
        known = ", ".join(Campaign.objects.values_list("name", flat=True)) or "none yet"
        raise Campaign.DoesNotExist(f"no campaign {ref!r} (known: {known})")
    return found


def pool_by_ref(ref: str | int) -> Pool:
    """A pool by numeric id or ``KG/SAMPLE/POOL`` (pool names may contain '/': the first two parts are KG and
    sample). Pool.DoesNotExist lists the known pools."""
    ref = str(ref)
    pools = Pool.objects.select_related("sample__kg")
    found = None
    if ref.isdigit():
        found = pools.filter(pk=int(ref)).first()
    elif ref.count("/") >= 2:
        kg, sample, name = ref.split("/", 2)
        found = pools.filter(sample__kg__name=kg, sample__name=sample, name=name).first()
    if found is None:
        known = ", ".join(f"{p.pk}={p.sample.kg.name}/{p.sample.name}/{p.name}" for p in pools.order_by("pk")) or "none yet"
        raise Pool.DoesNotExist(f"no pool {ref!r}; give KG/SAMPLE/POOL or the pool id (known: {known})")
    return found


_ROLES_MEMO = "_roles_of_request_user"


def remember_roles(campaign: Campaign, user, roles: set[str]) -> None:
    """Keep ``user``'s roles on this campaign instance (a view's own, fresh per request) for ``user_roles``."""
    setattr(campaign, _ROLES_MEMO, (user.pk, frozenset(roles)))


def campaign_with_roles(name: str, user) -> tuple[Campaign | None, set[str]]:
    """The campaign called ``name`` (pool, sample and KG loaded) and ``user``'s roles in it, in one query: every
    API request starts with this, so the roles ride along through a LEFT JOIN on the user's memberships (one
    row per role; one row with no role for a non-member). The join costs the ORM less than four EXISTS columns
    (about 2.5 ms less to build and compile per request)."""
    rows = list(
        Campaign.objects.select_related("pool__sample__kg").defer(*DEFERRED_PER_REQUEST).filter(name=name)
        .annotate(mine=FilteredRelation("memberships", condition=Q(memberships__user_id=user.pk)))
        .annotate(_member_role=F("mine__role")).order_by()
    )
    if not rows:
        return None, set()
    campaign = rows[0]
    roles = _with_superuser({row._member_role for row in rows if row._member_role}, user)
    remember_roles(campaign, user, roles)
    return campaign, roles


def forget_roles(campaign: Campaign) -> None:
    campaign.__dict__.pop(_ROLES_MEMO, None)


def user_roles(campaign: Campaign, user) -> set[str]:
    memo = getattr(campaign, _ROLES_MEMO, None)
    if memo is not None and memo[0] == user.pk:
        return set(memo[1])
    return _with_superuser(set(Membership.objects.filter(campaign=campaign, user=user).values_list("role", flat=True)), user)


def _with_superuser(roles: set[str], user) -> set[str]:
    """Superusers are admins of every campaign."""
    if getattr(user, "is_superuser", False):
        roles.add(Role.ADMIN)
    return roles


def has_role(campaign: Campaign, user, *roles: str) -> bool:
    return bool(user_roles(campaign, user) & set(roles))


def campaigns_of(user) -> QuerySet[Campaign]:
    return Campaign.objects.filter(memberships__user=user).distinct()


def campaign_progress(campaign: Campaign, counts: ItemCounts | None = None) -> dict[str, int]:
    """Items per status (every status present, 0 when none), gold checks apart, plus ``total`` and ``gold``;
    from ``counts`` (an ``item_counts.ItemCounts`` of the campaign) when given, else one grouped query."""
    counts = counts if counts is not None else item_counts(campaign)
    progress = {status: counts.by_status.get(status, 0) for status in Item.Status.values}
    progress["total"] = sum(progress[s] for s in Item.Status.values)
    progress["gold"] = counts.gold
    return progress
