"""Campaign API views (/api/v1/campaigns/): create from a pool, settings, members, progress, quality and exports
as streamed downloads. Thin wrappers over the services; everything but the list is for the campaign's admins and
staff (``kgpool.api``), so annotators learn nothing here about items, other people's answers or exact figures.
Judging itself stays on the hand-out endpoints (``annotation.api.views``)."""
from __future__ import annotations

import math
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import campaign_serializers as s
from annotation.lib.evidence import DEFAULT_EVIDENCE_POLICY
from annotation.models import Campaign, Item, Judgment, Role
from annotation.selectors import web
from annotation.services.errors import AnnotationError
from kgpool.api import BadRequest, Conflict, ErrorOut, errors, get_or_404, require_staff


def _managed(request: Request, name: str) -> Campaign:
    campaign = get_or_404(Campaign.objects.select_related("pool__sample__kg"), "campaign", name=name)
    if not web.can_manage(campaign, request.user):
        raise PermissionDenied("this is for the campaign's admins and staff")
    return campaign


def _number(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _interval(interval) -> dict:
    return {"estimate": _number(interval.estimate), "low": _number(interval.low), "high": _number(interval.high)}


class CampaignList(APIView):
    @extend_schema(responses={200: s.CampaignRowOut(many=True), **errors(401)},
                   summary="My campaigns, my roles in them, and whether I manage them (staff: all)")
    def get(self, request: Request) -> Response:
        return Response([{"name": r.campaign.name, "description": r.campaign.description,
                          "kg": r.campaign.pool.sample.kg.name, "pool": r.campaign.pool_id, "roles": r.roles,
                          "manage": r.manage} for r in web.campaigns_for(request.user)])

    @extend_schema(request=s.CampaignIn, responses={201: s.CampaignSettingsOut, **errors(400, 403, 404, 409)},
                   summary="Create a campaign over a finished pool (staff); optionally run the trivial filters and "
                           "add gold checks")
    def post(self, request: Request) -> Response:
        from annotation.services.campaigns import create_campaign
        from annotation.services.filtering import apply_filter
        from annotation.services.gold import add_gold_items
        from pooling.models import Pool

        require_staff(request.user, "creating a campaign")
        data = s.CampaignIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        pool = get_or_404(Pool.objects.select_related("sample__kg"), "pool", pk=v["pool"])
        if pool.status != Pool.Status.DONE:
            raise Conflict(f"pool {pool.pk} is {pool.status}; a campaign judges a finished pool")
        if Campaign.objects.filter(name=v["name"]).exists():
            raise Conflict(f"a campaign named {v['name']!r} already exists")
        try:
            with transaction.atomic():
                campaign = create_campaign(
                    v["name"], pool, description=v.get("description", ""), allowed_domains=v.get("allowed_domains"),
                    assignment_timeout_s=v.get("assignment_timeout_s", 1800), gold_rate=v.get("gold_rate", 0.05),
                    rushed_factor=v.get("rushed_factor", 0.25),
                    evidence_policy=v.get("evidence_policy", DEFAULT_EVIDENCE_POLICY), seed=v["seed"], reuse=v["reuse"])
                _set(campaign, v)
                if v.get("filters"):
                    apply_filter(campaign, v["filters"])
                if v["gold"]:
                    add_gold_items(campaign, seed=v["seed"])
        except AnnotationError as exc:
            raise BadRequest(str(exc)) from None
        return Response(s.CampaignSettingsOut(campaign).data, status=status.HTTP_201_CREATED)


def _set(campaign: Campaign, values: dict) -> None:
    """Apply the settings among ``values`` (services: plain settings, sources, order and budget)."""
    from annotation.services.campaigns import SETTINGS, set_allowed_domains, update_settings
    from annotation.services.judging_order import set_judging_order

    update_settings(campaign, **{k: values[k] for k in SETTINGS if k in values})
    if "allowed_domains" in values:
        set_allowed_domains(campaign, values["allowed_domains"])
    if "guidelines" in values or "relation_guidelines" in values:
        from annotation.services.guidelines import set_guidelines

        set_guidelines(campaign, values.get("guidelines", campaign.guidelines),
                       values.get("relation_guidelines", campaign.relation_guidelines or {}))
    if "judging_order" in values or "item_budget" in values:
        order = values.get("judging_order", campaign.judging_order)
        budget = values["item_budget"] if "item_budget" in values else "keep"
        if order != campaign.judging_order or (budget != "keep" and budget != campaign.item_budget):
            set_judging_order(campaign, order, budget=budget)


class CampaignDetail(APIView):
    @extend_schema(responses={200: s.CampaignSettingsOut, **errors(401, 403, 404)}, summary="A campaign's settings")
    def get(self, request: Request, name: str) -> Response:
        return Response(s.CampaignSettingsOut(_managed(request, name)).data)

    @extend_schema(request=s.SettingsFields, responses={200: s.CampaignSettingsOut, **errors(400, 401, 403, 404)},
                   summary="Change settings (order and budget also mid-campaign: the queue is re-keyed)")
    def patch(self, request: Request, name: str) -> Response:
        campaign = _managed(request, name)
        data = s.SettingsFields(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        try:
            with transaction.atomic():
                _set(campaign, data.validated_data)
        except AnnotationError as exc:
            raise BadRequest(str(exc)) from None
        campaign.refresh_from_db()
        return Response(s.CampaignSettingsOut(campaign).data)


def _members(campaign: Campaign) -> list[dict]:
    return [{"username": row["user"].username, "roles": row["roles"], "judged": row["judged"],
             "adjudicated": row["adjudicated"]} for row in web.member_rows(campaign)]


class Members(APIView):
    @extend_schema(responses={200: s.MemberOut(many=True), **errors(401, 403, 404)},
                   summary="Members, their roles and how much they did")
    def get(self, request: Request, name: str) -> Response:
        return Response(_members(_managed(request, name)))

    @extend_schema(request=s.MemberIn, responses={201: s.MemberOut(many=True), **errors(400, 401, 403, 404)},
                   summary="Give a user a role (idempotent)")
    def post(self, request: Request, name: str) -> Response:
        from annotation.services.campaigns import add_member

        campaign = _managed(request, name)
        data = s.MemberIn(data=request.data)
        data.is_valid(raise_exception=True)
        user = get_user_model().objects.filter(username=data.validated_data["username"]).first()
        if user is None:
            raise BadRequest({"username": [f"no user {data.validated_data['username']!r}"]})
        add_member(campaign, user, data.validated_data["role"])
        return Response(_members(campaign), status=status.HTTP_201_CREATED)


class Member(APIView):
    @extend_schema(responses={200: s.MemberOut(many=True), **errors(401, 403, 404)},
                   summary="Take a role away (their labels stay)")
    def delete(self, request: Request, name: str, username: str, role: str) -> Response:
        from annotation.services.campaigns import remove_member

        campaign = _managed(request, name)
        user = get_user_model().objects.filter(username=username).first()
        if user is None or role not in Role.values:
            raise NotFound(f"no member {username!r} with role {role!r}")
        remove_member(campaign, user, role)
        return Response(_members(campaign))


class Progress(APIView):
    @extend_schema(responses={200: s.CampaignProgressOut, **errors(401, 403, 404)},
                   summary="Exact, live progress: items per status, decided, left (admins and staff)")
    def get(self, request: Request, name: str) -> Response:
        from datetime import timedelta

        from django.utils import timezone

        from annotation.selectors.campaigns import campaign_progress
        from annotation.selectors.labels import FINAL_STATUSES
        from annotation.services.campaign_evaluation import judging_left

        campaign = _managed(request, name)
        counts = campaign_progress(campaign)
        decided = sum(counts[status] for status in FINAL_STATUSES)
        left = judging_left(campaign)
        last_hour = Judgment.objects.filter(item__campaign=campaign,
                                            given_at__gt=timezone.now() - timedelta(hours=1)).count()
        return Response({"items": counts["total"], "statuses": {k: counts[k] for k in Item.Status.values},
                         "gold": counts["gold"], "decided": decided,
                         "percent": round(100 * decided / counts["total"], 2) if counts["total"] else 0.0,
                         "left": left, "judgments_last_hour": last_hour, "done": left == 0})


class Quality(APIView):
    @extend_schema(parameters=[OpenApiParameter("samples", int, description="bootstrap resamples (10-2000, 200)")],
                   responses={200: s.QualityOut, **errors(400, 401, 403, 404)},
                   summary="Gold accuracy per annotator, rushed judging, flags, reused labels, agreement with CIs")
    def get(self, request: Request, name: str) -> Response:
        from annotation.selectors.gold import gold_accuracy_by_annotator, gold_summary
        from annotation.selectors.quality import agreement_with_ci, flag_counts, rushed_report
        from annotation.services.reuse import reused_count

        campaign = _managed(request, name)
        samples = request.query_params.get("samples", "200")
        if not (samples.isascii() and samples.isdigit() and 10 <= int(samples) <= 2000):
            raise BadRequest({"samples": ["a whole number from 10 to 2000"]})
        rushed = rushed_report(campaign)
        return Response({
            "gold_rate": campaign.gold_rate, "gold_items": gold_summary(campaign).items,
            "gold": [{"username": g.username, "correct": g.correct, "total": g.total, "accuracy": _interval(g.accuracy),
                      "below_threshold": g.below(campaign.gold_threshold)} for g in gold_accuracy_by_annotator(campaign)],
            "rushed_limit_ms": _number(rushed.limit_ms),
            "rushed": [{"username": p.username, "judgments": p.judgments, "median_ms": _number(p.median_ms),
                        "ratio": _number(p.ratio), "rushed": p.rushed, "flagged": p.flagged} for p in rushed.annotators],
            "flags": {f.kind: f.items for f in flag_counts(campaign)}, "reused": reused_count(campaign),
            "agreement": [{"group": a.group, "items": a.items, "cant_tell": a.cant_tell, "percent": _interval(a.percent),
                           "kappa": _interval(a.kappa), "ac1": _interval(a.ac1), "alpha": _interval(a.alpha)}
                          for a in agreement_with_ci(campaign, samples=int(samples))],
        })


EXPORT_FILES = {"labels": "labels.tsv", "positives": "positives.tsv", "questions": "questions.tsv",
                "qrels": "qrels.txt", "jsonl": "provenance.jsonl", "csv": "provenance.csv",
                "labels-origin": "labels-origin.tsv", "qrels-annotator": "qrels.txt", "readme": "README.md",
                "bundle": "bundle.tar.gz"}


class Export(APIView):
    @extend_schema(parameters=[OpenApiParameter("annotator", str, description="qrels-annotator: whose answers")],
                   responses={(200, "application/octet-stream"): OpenApiTypes.BINARY,
                              **{c: OpenApiResponse(ErrorOut) for c in (400, 401, 403, 404)}},
                   summary="Download an export (streamed): labels, positives, questions, qrels, jsonl, csv, "
                           "labels-origin, qrels-annotator, readme, or the whole bundle (.tar.gz)")
    def get(self, request: Request, name: str, fmt: str) -> FileResponse:
        from annotation.services.exports import export_judgments

        campaign = _managed(request, name)
        if fmt not in s.EXPORT_FORMATS:
            raise NotFound(f"unknown format {fmt!r}; formats: {', '.join(s.EXPORT_FORMATS)}")
        filename = f"{campaign.name}-{EXPORT_FILES[fmt]}"
        if fmt == "bundle":
            from annotation.services.bundles import export_bundle

            folder = tempfile.mkdtemp(prefix="kgpool-export-")
            path, _files = export_bundle(campaign, Path(folder) / f"{campaign.name}.tar.gz")
            handle = open(path, "rb")
            path.unlink()  # the open handle keeps the data until the download is done (POSIX)
            Path(folder).rmdir()
            return FileResponse(handle, as_attachment=True, filename=filename, content_type="application/gzip")
        annotator = None
        if fmt == "qrels-annotator":
            username = request.query_params.get("annotator", "")
            annotator = get_user_model().objects.filter(username=username,
                                                         campaign_memberships__campaign=campaign).first()
            if annotator is None:
                raise BadRequest({"annotator": ["give ?annotator=USERNAME of a member of this campaign"]})
        spool = tempfile.TemporaryFile()
        text = open(spool.fileno(), "w", encoding="utf-8", newline="", closefd=False)
        export_judgments(campaign, fmt, text, **({"annotator": annotator} if annotator is not None else {}))
        text.flush()
        spool.seek(0)
        return FileResponse(spool, as_attachment=True, filename=filename,
                            content_type="text/plain; charset=utf-8")
