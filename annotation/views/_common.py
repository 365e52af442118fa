"""Helpers shared by the page views: campaign lookup and access checks."""
from __future__ import annotations

import re

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.models import Assignment, Campaign, Role
from annotation.selectors.campaigns import DEFERRED_PER_REQUEST, campaign_with_roles, user_roles
from annotation.selectors.web import can_manage, hand_out_in

_ITEM_PK = re.compile(r"\bitem \d+")


def campaign_or_404(name: str) -> Campaign:
    rows = Campaign.objects.select_related("pool__sample__kg").defer(*DEFERRED_PER_REQUEST)
    campaign = rows.filter(name=name).first()
    if campaign is None:
        raise Http404(f"no campaign {name!r}")
    return campaign


def member_campaign(name: str, user, *roles: str) -> tuple[Campaign, set[str]]:
    """The campaign and the user's roles there; 403 unless they hold one of ``roles`` (any role if none)."""
    campaign, mine = campaign_with_roles(name, user)  # remembered: the services called next check them again
    if campaign is None:
        raise Http404(f"no campaign {name!r}")
    if not mine and not can_manage(campaign, user):
        raise PermissionDenied(f"you are not a member of campaign {campaign.name}")
    if roles and not mine & set(roles):
        wanted = " or ".join(roles)
        raise PermissionDenied(f"this page is for the campaign's {wanted}s")
    return campaign, mine


def managed_campaign(name: str, user) -> Campaign:
    campaign = campaign_or_404(name)
    if not can_manage(campaign, user):
        raise PermissionDenied("campaign management is for the campaign's admins and staff")
    return campaign


def own_hand_out(campaign: Campaign, user, hand_out: int, kind: str = Assignment.Kind.JUDGE) -> Assignment:
    """The user's hand-out ``hand_out`` (any state): 404 when the campaign has none, 403 when it is another's."""
    assignment = hand_out_in(campaign, hand_out, kind)
    if assignment is None:
        raise Http404(f"no hand-out {hand_out} in campaign {campaign.name}")
    if assignment.user_id != user.pk:
        raise PermissionDenied("this item is not handed to you" if kind == Assignment.Kind.JUDGE
                               else "this conflict is not handed to you")
    assignment.item.campaign = campaign  # the request's campaign, with its pool, sample and KG already loaded
    return assignment


def public_message(exc: Exception) -> str:
    """A service error as shown to annotators: item pks replaced (they would tell gold checks apart)."""
    return _ITEM_PK.sub("this item", str(exc))


def nav_context(campaign: Campaign, user, roles: set[str] | None = None) -> dict:
    roles = user_roles(campaign, user) if roles is None else roles
    return {
        "campaign": campaign,
        "is_annotator": Role.ANNOTATOR in roles,
        "is_adjudicator": Role.ADJUDICATOR in roles,
        "is_expert": Role.EXPERT in roles,
        "can_manage": can_manage(campaign, user),
    }
