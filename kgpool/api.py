"""What the /api/v1/ views share: error answers, who may read and write what, pagination.

Who may do what (the permissions matrix of ``tests/test_security_permissions_matrix.py`` walks every URL):

- pooling objects (knowledge graphs, systems, samples, pools and their entries with provenance): read by staff and
  by the admins of a campaign on that KG; created by staff only; an upload's progress is read by its uploader and
  staff;
- campaigns: the list shows each user their own campaigns (every campaign to staff); settings, members,
  progress with exact figures, quality and exports are for the campaign's admins and staff; creating a campaign is
  for staff; judging goes through the judging endpoints (hand-outs), as before;
- evaluation runs: read by whoever may open the report page (``runs_visible_to``); started by staff.

Annotators therefore never reach pool entries, item states, other people's answers or exact campaign figures
through this API: those answers are 403 (a resource they may not know about at all is 404).
"""
from __future__ import annotations

from typing import Any

from django.db.models import Q
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, PermissionDenied
from rest_framework.pagination import PageNumberPagination

from annotation.api.serializers import ErrorOut  # one error shape for the whole API


class BadRequest(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "conflict with the recorded state"
    default_code = "conflict"


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    text = {400: "invalid input", 401: "not signed in", 403: "not allowed for your role", 404: "no such object",
            409: "conflicts with what exists"}
    return {code: OpenApiResponse(ErrorOut, description=text[code]) for code in codes}


def is_staff(user) -> bool:
    return bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))


def require_staff(user, what: str) -> None:
    if not is_staff(user):
        raise PermissionDenied(f"{what} is for staff")


def managed_kg_ids(user) -> set[int] | None:
    """KGs whose pooling objects ``user`` may read: None = all (staff); else those of campaigns they admin."""
    if is_staff(user):
        return None
    from annotation.models import Membership, Role

    return set(Membership.objects.filter(user=user, role=Role.ADMIN)
               .values_list("campaign__pool__sample__kg_id", flat=True))


def kg_filter(user, field: str = "pk") -> Q:
    ids = managed_kg_ids(user)
    return Q() if ids is None else Q(**{f"{field}__in": ids})


def check_kg_access(user, kg) -> None:
    ids = managed_kg_ids(user)
    if ids is not None and kg.pk not in ids:
        raise PermissionDenied("pooling objects are for staff and the admins of a campaign on this knowledge graph")


def get_or_404(queryset, what: str, **lookup: Any):
    found = queryset.filter(**lookup).first()
    if found is None:
        raise NotFound(f"no {what} {' '.join(str(v) for v in lookup.values())!s}")
    return found


class Pages(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 1000 rows a page)."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
