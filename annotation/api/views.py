"""API views (work addressed by hand-out id, never by item pk): thin wrappers over the services (writes) and selectors (reads), with clear 4xx answers:
400 invalid input or source, 403 not a member / wrong role / not your item, 404 unknown campaign or hand-out,
409 conflicts with the recorded state (already judged differently, hand-out closed, item already decided)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import PermissionDenied
from django.db import connections, router
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound
from rest_framework.exceptions import PermissionDenied as Forbidden
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import serializers as s
from annotation.api.hot_path import (
    fast_next_item,
    fast_submit,
    handout_body,
    judgment_body,
    next_hand_out_body,
    quote_of,
)
from annotation.models import Assignment, Judgment, Role
from annotation.selectors import web
from annotation.services.adjudication import adjudicate, next_adjudication
from annotation.services.distribution import next_item, skip_item
from annotation.services.errors import (
    AlreadyJudged,
    AnnotationError,
    InvalidSource,
    InvalidState,
    MissingComment,
    NotAllowed,
    NotAssigned,
    UndoRefused,
)
from annotation.services.hand_out_sql import fast_path
from annotation.services.judging import submit_judgment
from annotation.services.undo import undo_judgment
from annotation.views._common import member_campaign, own_hand_out, public_message
from kgpool.security import OfferedToken, offered_token

ERRORS = {
    400: OpenApiResponse(s.ErrorOut, description="invalid input (e.g. source not on the allow-list)"),
    403: OpenApiResponse(s.ErrorOut, description="not a member, wrong role, or not your hand-out"),
    404: OpenApiResponse(s.ErrorOut, description="no such campaign or hand-out"),
    409: OpenApiResponse(s.ErrorOut, description="conflicts with what is recorded"),
}


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "conflict with the recorded state"
    default_code = "conflict"


class BadRequest(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"


def _campaign(request: Request, name: str, *roles: str):
    try:
        campaign, _roles = member_campaign(name, request.user, *roles)
    except Http404 as exc:
        raise NotFound(str(exc)) from None
    except PermissionDenied as exc:
        raise Forbidden(str(exc)) from None
    return campaign


def _hand_out(request: Request, campaign, hand_out: int, kind: str = Assignment.Kind.JUDGE) -> Assignment:
    """The requester's hand-out: 404 when the campaign has no such hand-out, 403 when it is someone else's."""
    try:
        return own_hand_out(campaign, request.user, hand_out, kind)
    except Http404 as exc:
        raise NotFound(str(exc)) from None
    except PermissionDenied as exc:
        raise Forbidden(str(exc)) from None


class CampaignList(APIView):
    @extend_schema(responses=s.CampaignOut(many=True), summary="My campaigns and my roles in them")
    def get(self, request: Request) -> Response:
        rows = [
            {"name": r.campaign.name, "description": r.campaign.description, "kg": r.campaign.pool.sample.kg.name,
             "roles": r.roles, "manage": r.manage, "allowed_domains": r.campaign.allowed_domains}
            for r in web.campaigns_for(request.user)
        ]
        return Response(rows)


class ProgressView(APIView):
    @extend_schema(responses={200: s.ProgressOut, **ERRORS}, summary="My progress and the campaign's")
    def get(self, request: Request, name: str) -> Response:
        campaign = _campaign(request, name)
        return Response(web.progress(campaign, request.user).as_dict())


class _TokenCheckedInStatement(APIView):
    """The judging hot path (issue 21): a request offering an API token (and no session cookie) is authenticated by
    the service's first statement, which joins the token's active user in, not by a lookup of its own. DRF's
    authentication and permission checks wait, and run as always (``checked``) when the fast path does not take
    the request: an invalid token still gets DRF's 401 and counts towards its address's limit."""

    offered: OfferedToken | None = None

    def initial(self, request: Request, *args, **kwargs) -> None:
        postgres = connections[router.db_for_write(Assignment)].vendor == "postgresql"
        self.offered = offered_token(request) if fast_path() and postgres else None
        super().initial(request, *args, **kwargs)

    def perform_authentication(self, request: Request) -> None:
        if self.offered is None:
            super().perform_authentication(request)

    def check_permissions(self, request: Request) -> None:
        if self.offered is None:
            super().check_permissions(request)

    def caller(self, request: Request):
        """Who the fast path serves: the offered token, else the authenticated user."""
        return self.offered if self.offered is not None else request.user

    def checked(self, request: Request, user=None) -> None:
        """``user`` (the fast path found them from their token) as the request's user; without one, DRF's
        authentication and permission checks, which had waited."""
        if user is not None:
            request.user = user
        elif self.offered is not None:
            self.offered = None
            self.perform_authentication(request)
            self.check_permissions(request)


class NextItem(_TokenCheckedInStatement):
    @extend_schema(request=None, responses={200: s.HandoutOut, **ERRORS},
                   summary="Hand me an item to judge (my open one first); item null when nothing is left")
    def post(self, request: Request, name: str) -> Response:
        if fast_path():
            answered = fast_next_item(name, self.caller(request))
            if answered is not None:
                self.checked(request, answered.user)
                return Response(answered.body, status=answered.status)
            # not an annotator of such a campaign (or an invalid token): the checks below give the 401 / 404 / 403
        self.checked(request)
        campaign = _campaign(request, name, Role.ANNOTATOR)
        try:
            assignment = next_item(campaign, request.user)
        except NotAllowed as exc:
            raise Forbidden(str(exc)) from None
        return Response(handout_body(assignment, campaign))


class ItemDetail(APIView):
    @extend_schema(responses={200: s.HandoutOut, **ERRORS}, summary="An open hand-out of mine (403 another's)")
    def get(self, request: Request, name: str, hand_out: int) -> Response:
        campaign = _campaign(request, name, Role.ANNOTATOR)
        assignment = _hand_out(request, campaign, hand_out)
        if not web.is_open(assignment):
            raise Conflict("this hand-out is closed (answered, skipped or expired); ask for the next item")
        return Response(handout_body(assignment, campaign))


class SubmitJudgment(_TokenCheckedInStatement):
    @extend_schema(request=s.JudgmentIn, responses={201: s.JudgmentOut, 200: s.JudgmentOut, **ERRORS},
                   summary="Answer an item handed to me (201 new, 200 a repeat of the same request)")
    def post(self, request: Request, name: str, hand_out: int) -> Response:
        data = s.JudgmentIn(data=request.data)
        if fast_path() and data.is_valid():
            with _submit_errors():
                answered = fast_submit(name, hand_out, self.caller(request), data.validated_data)
            if answered is not None:
                self.checked(request, answered.user)
                return Response(answered.body, status=answered.status)
            # not the user's hand-out as an annotator, an invalid token, or not PostgreSQL: the path below answers
        self.checked(request)
        campaign = _campaign(request, name, Role.ANNOTATOR)
        assignment = _hand_out(request, campaign, hand_out)
        item = assignment.item
        data.is_valid(raise_exception=True)
        v = data.validated_data
        # A hand-out is done exactly when its judgment is stored (same transaction): a repeat answers 200.
        existed = assignment.state == Assignment.State.DONE
        with _submit_errors():
            judgment = submit_judgment(item, request.user, v["answer"], v["source_url"], quote=quote_of(v),
                                       client_time_ms=v.get("time_on_task_ms"), request_id=v.get("request_id", ""))
        body = judgment_body(judgment)
        if v["next"]:
            body["next"] = next_hand_out_body(name, request.user, campaign)
        return Response(body, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)


@contextmanager
def _submit_errors() -> Iterator[None]:
    """A submit's service errors as API answers: 400 invalid source or answer, 409 closed hand-out, changed
    answer or a request id used for another item."""
    try:
        yield
    except InvalidSource as exc:
        raise BadRequest({"source_url": [str(exc)], "detail": str(exc)}) from None
    except MissingComment as exc:
        raise BadRequest({"quote": [str(exc)], "detail": str(exc)}) from None
    except (NotAssigned, AlreadyJudged) as exc:
        raise Conflict(public_message(exc)) from None
    except AnnotationError as exc:
        message = public_message(exc)
        raise Conflict(message) if "request id" in message else BadRequest(message) from None


class Skip(APIView):
    @extend_schema(request=None, responses={200: s.ErrorOut, **ERRORS},
                   summary="Give an item back; it is never handed to me again")
    def post(self, request: Request, name: str, hand_out: int) -> Response:
        campaign = _campaign(request, name, Role.ANNOTATOR)
        assignment = _hand_out(request, campaign, hand_out)
        try:
            skip_item(assignment.item, request.user)
        except NotAssigned as exc:
            assignment.refresh_from_db()
            if assignment.state != Assignment.State.SKIPPED:
                raise Conflict(public_message(exc)) from None
        return Response({"detail": f"hand-out {assignment.pk} skipped"})


class Undo(APIView):
    @extend_schema(request=None, responses={200: s.HandoutOut, **ERRORS},
                   summary="Undo my answer of this hand-out while nobody else acted on it; the hand-out opens again")
    def post(self, request: Request, name: str, hand_out: int) -> Response:
        campaign = _campaign(request, name, Role.ANNOTATOR)
        assignment = _hand_out(request, campaign, hand_out)
        judgment = Judgment.objects.filter(assignment=assignment).first()
        if judgment is None:
            raise Conflict("this hand-out has no answer to undo")
        try:
            reopened = undo_judgment(judgment, request.user, campaign=campaign)
        except (UndoRefused, NotAllowed) as exc:
            raise Conflict(public_message(exc)) from None
        return Response(handout_body(reopened, campaign))


class NextAdjudication(APIView):
    @extend_schema(request=None, responses={200: s.AdjudicationHandoutOut, **ERRORS},
                   summary="Hand me a conflict to decide (never one I judged); item null when none")
    def post(self, request: Request, name: str) -> Response:
        campaign = _campaign(request, name, Role.ADJUDICATOR)
        try:
            assignment = next_adjudication(campaign, request.user)
        except NotAllowed as exc:
            raise Forbidden(str(exc)) from None
        if assignment is None:
            return Response({"hand_out": None, "item": None, "answers": [], "expires_at": None,
                             "detail": "no conflict for you to decide"})
        return Response({"hand_out": assignment.pk, "item": web.item_view(assignment.item).as_dict(),
                         "answers": web.adjudication_answers(assignment.item), "expires_at": assignment.expires_at})


class Adjudicate(APIView):
    @extend_schema(request=s.AdjudicationIn, responses={201: s.AdjudicationOut, **ERRORS},
                   summary="Decide a conflict handed to me")
    def post(self, request: Request, name: str, hand_out: int) -> Response:
        campaign = _campaign(request, name, Role.ADJUDICATOR)
        assignment = _hand_out(request, campaign, hand_out, Assignment.Kind.ADJUDICATE)
        data = s.AdjudicationIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            decision = adjudicate(assignment.item, request.user, data.validated_data["label"],
                                  data.validated_data["reason"])
        except NotAllowed as exc:
            raise Forbidden(public_message(exc)) from None
        except (InvalidState, NotAssigned) as exc:
            raise Conflict(public_message(exc)) from None
        except AnnotationError as exc:
            raise BadRequest(public_message(exc)) from None
        return Response({"hand_out": assignment.pk, "label": decision.label, "reason": decision.reason,
                         "decided_at": decision.decided_at}, status=status.HTTP_201_CREATED)
