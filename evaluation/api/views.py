"""Evaluation API (/api/v1/evaluations/): start a run (staff), follow its progress, read its results as JSON and
download its files and figures. Who may read a run is who may open its report page (``runs_visible_to``).
Torch-free: computing happens in ``evaluation.tasks``."""
from __future__ import annotations

from django.db import transaction
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.models import EvaluationRun
from evaluation.services.result import NEGATIVE_SOURCES, PROTOCOLS
from evaluation.selectors.runs import CONTENT_TYPES, run_file, run_report, runs_visible_to, shown_error
from kgpool.api import BadRequest, Conflict, ErrorOut, errors, get_or_404, require_staff

INT32 = 2**31 - 1


class RunOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kg = serializers.CharField(source="sample.kg.name")
    sample = serializers.CharField(source="sample.name")
    campaign = serializers.CharField(source="campaign.name", allow_null=True, default=None)
    systems = serializers.ListField(child=serializers.CharField(), source="system_names")
    options = serializers.JSONField()
    status = serializers.CharField(help_text="pending, running, done or failed")
    stage = serializers.CharField()
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    error = serializers.CharField()
    files = serializers.ListField(child=serializers.CharField(), help_text="download with files/{name}")
    seconds = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class OptionsIn(serializers.Serializer):
    policy = serializers.ChoiceField(choices=("realistic", "optimistic", "pessimistic"), default="realistic")
    cutoff = serializers.IntegerField(min_value=1, max_value=10_000, default=10)
    depths = serializers.ListField(child=serializers.IntegerField(min_value=0, max_value=INT32), required=False,
                                   max_length=1000)
    analyses = serializers.BooleanField(default=True, help_text="discriminative power, data sensitivity")
    open_world = serializers.BooleanField(default=True)
    dp_test = serializers.ChoiceField(choices=("t", "bootstrap"), default="t")
    protocols = serializers.ListField(
        child=serializers.ChoiceField(choices=PROTOCOLS), required=False, max_length=len(PROTOCOLS),
        help_text="besides link prediction: classification, pair_ranking, property (sparse and completed labels)")
    negatives = serializers.ListField(
        child=serializers.ChoiceField(choices=NEGATIVE_SOURCES), required=False, max_length=len(NEGATIVE_SOURCES),
        help_text="triple classification negatives, each reported apart (default corrupted-typed)")
    negatives_dir = serializers.CharField(required=False, max_length=1000,
                                          help_text="server folder with valid_negatives.txt / test_negatives.txt "
                                                    "(negatives 'dataset'; default: the KG's source folder)")
    negatives_seed = serializers.IntegerField(min_value=0, max_value=INT32, default=0)
    pair_k = serializers.IntegerField(min_value=1, max_value=100_000, default=100, help_text="MAP@K / P@K cut-off")


class RunIn(serializers.Serializer):
    kg = serializers.CharField(max_length=100)
    sample = serializers.CharField(max_length=100)
    campaign = serializers.CharField(max_length=100, required=False, help_text="whose final labels complete the "
                                                                                 "sample (else sparse labels only)")
    systems = serializers.ListField(child=serializers.CharField(max_length=100), required=False, max_length=200,
                                    help_text="default: every system with scores on the sample")
    options = OptionsIn(required=False)


def _out(run: EvaluationRun, user) -> dict:
    run.system_names = list(run.systems.order_by("name").values_list("name", flat=True))
    return {**RunOut(run).data, "error": shown_error(run, user)}


def _visible(request: Request, run_id: int) -> EvaluationRun:
    return get_or_404(runs_visible_to(request.user).select_related("campaign"), "evaluation run", pk=run_id)


class RunList(APIView):
    @extend_schema(responses={200: RunOut(many=True), **errors(401)}, summary="Evaluation runs I may open")
    def get(self, request: Request) -> Response:
        runs = runs_visible_to(request.user).select_related("campaign")[:500]
        return Response([_out(run, request.user) for run in runs])

    @extend_schema(request=RunIn, responses={202: RunOut, **errors(400, 401, 403, 404)},
                   summary="Evaluate a sample's systems on sparse and completed labels (in the background: poll it)")
    def post(self, request: Request) -> Response:
        from annotation.models import Campaign
        from evaluation.services.errors import EvaluationError
        from evaluation.services.inputs import evaluable_systems
        from evaluation.services.result import EvaluationOptions
        from evaluation.services.runs import create_run, start_evaluation
        from pooling.models import Sample, System

        require_staff(request.user, "starting an evaluation")
        data = RunIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        sample = get_or_404(Sample.objects.select_related("kg").filter(kg__name=v["kg"]), "sample", name=v["sample"])
        campaign = None
        if v.get("campaign"):
            campaign = get_or_404(Campaign.objects.select_related("pool"), "campaign", name=v["campaign"])
        options = v.get("options")
        if options is None:
            defaults = OptionsIn(data={})
            defaults.is_valid(raise_exception=True)
            options = defaults.validated_data
        try:
            systems = evaluable_systems(sample, v.get("systems"))
            with transaction.atomic():
                run = create_run(sample, systems=systems, campaign=campaign,
                                 pool=campaign.pool if campaign is not None else None,
                                 options=EvaluationOptions(**{key: tuple(value) if isinstance(value, list) and key in (
                                     "protocols", "negatives") else value for key, value in dict(options).items()}))
                start_evaluation(run, robust=True)
        except (EvaluationError, System.DoesNotExist) as exc:
            raise BadRequest(str(exc)) from None
        run.refresh_from_db()
        return Response(_out(run, request.user), status=status.HTTP_202_ACCEPTED)


class RunDetail(APIView):
    @extend_schema(responses={200: RunOut, **errors(401, 404)}, summary="A run: status, stage and progress")
    def get(self, request: Request, run_id: int) -> Response:
        return Response(_out(_visible(request, run_id), request.user))


class RunResults(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, **errors(401, 404, 409)},
                   summary="The run's results (its summary.json: tables per label set, tau, depth curve ...)")
    def get(self, request: Request, run_id: int) -> Response:
        run = _visible(request, run_id)
        report = run_report(run)
        if report is None:
            error = shown_error(run, request.user)
            raise Conflict(f"evaluation run {run.pk} is {run.status}" + (f": {error}" if error else ""))
        return Response(report)


class RunFile(APIView):
    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY,
                              **{c: OpenApiResponse(ErrorOut) for c in (401, 404)}},
                   summary="One of the run's files (CSV, JSON) or figures (PNG)")
    def get(self, request: Request, run_id: int, name: str) -> FileResponse:
        from rest_framework.exceptions import NotFound

        run = _visible(request, run_id)
        path = run_file(run, name)
        if path is None:
            raise NotFound(f"no file {name!r} in evaluation run {run.pk}")
        return FileResponse(open(path, "rb"), content_type=CONTENT_TYPES.get(path.suffix, "application/octet-stream"),
                            as_attachment=path.suffix != ".png", filename=f"evaluation-{run.pk}-{name}")

