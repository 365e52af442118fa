"""Helpers shared by the page views: campaign lookup and access checks."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.models import Campaign, Role
from annotation.selectors.campaigns import user_roles
from annotation.selectors.web import can_manage


def campaign_or_404(name: str) -> Campaign:
    campaign = Campaign.objects.select_related("pool__sample__kg").filter(name=name).first()
    if campaign is None:
        raise Http404(f"no campaign {name!r}")
    return campaign


def member_campaign(name: str, user, *roles: str) -> tuple[Campaign, set[str]]:
    """The campaign and the user's roles there; 403 unless they hold one of ``roles`` (any role if none)."""
    campaign = campaign_or_404(name)
    mine = user_roles(campaign, user)
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


def nav_context(campaign: Campaign, user, roles: set[str] | None = None) -> dict:
    roles = user_roles(campaign, user) if roles is None else roles
    return {
        "campaign": campaign,
        "is_annotator": Role.ANNOTATOR in roles,
        "is_adjudicator": Role.ADJUDICATOR in roles,
        "can_manage": can_manage(campaign, user),
    }
