"""Pooling API views (/api/v1/): knowledge graphs (upload, imported in the background), systems (train, import,
status), samples, pools (build, status, entries with provenance) and uploads (progress). Thin: the services do
the work; who may do what is ``kgpool.api``."""
from __future__ import annotations

from collections import defaultdict
from typing import Callable, TypeVar

from django.db import transaction
from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kgpool.api import BadRequest, Conflict, Pages, check_kg_access, errors, get_or_404, kg_filter, require_staff
from pooling.api import serializers as s
from pooling.models import KnowledgeGraph, Pool, PoolEntry, PoolHit, Sample, System, Upload

UPLOAD_PARSERS = [MultiPartParser, FormParser, JSONParser]  # JSON: answered with what is missing (400)
Started = TypeVar("Started")


def _start(start: Callable[[], Started], refused: type[Exception], taken: tuple[str, ...]) -> Started:
    """Run a service that creates an object and queues its background work; its refusal becomes 409 when it says
    the name is ``taken`` (one of those words in the message), else 400."""
    try:
        return start()
    except refused as exc:
        raise (Conflict if any(word in str(exc) for word in taken) else BadRequest)(str(exc)) from None


def _accepted(data: dict) -> Response:
    return Response(data, status=status.HTTP_202_ACCEPTED)


def _kg(request: Request, name: str) -> KnowledgeGraph:
    kg = get_or_404(KnowledgeGraph.objects.all(), "knowledge graph", name=name)
    check_kg_access(request.user, kg)
    return kg


class KGList(APIView):
    parser_classes = UPLOAD_PARSERS

    @extend_schema(responses={200: s.KnowledgeGraphOut(many=True), **errors(401)},
                   summary="Knowledge graphs (staff: all; campaign admins: those of their campaigns)")
    def get(self, request: Request) -> Response:
        kgs = KnowledgeGraph.objects.filter(kg_filter(request.user)).order_by("name")
        return Response(s.KnowledgeGraphOut(kgs, many=True).data)

    @extend_schema(request={"multipart/form-data": s.KGUploadIn}, responses={202: s.UploadOut, **errors(400, 403, 409)},
                   summary="Upload a knowledge graph: imported in the background (follow /uploads/{id}/)")
    def post(self, request: Request) -> Response:
        from pooling.services.uploads import UploadError, create_upload

        require_staff(request.user, "uploading a knowledge graph")
        data = s.KGUploadIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        files = {key: v[key] for key in data.fields if key not in ("name", "description") and v.get(key) is not None}
        upload = _start(lambda: create_upload(Upload.Kind.KG, v["name"], files, params={"description": v["description"]},
                                              user=request.user), UploadError, ("exists", "being imported"))
        upload.refresh_from_db()
        return _accepted(s.UploadOut(upload).data)


class KGDetail(APIView):
    @extend_schema(responses={200: s.KnowledgeGraphOut, **errors(401, 403, 404)}, summary="A knowledge graph")
    def get(self, request: Request, kg: str) -> Response:
        return Response(s.KnowledgeGraphOut(_kg(request, kg)).data)


class UploadDetail(APIView):
    @extend_schema(responses={200: s.UploadOut, **errors(401, 403, 404)},
                   summary="An upload's progress and outcome (done: the KG or system; failed: why)")
    def get(self, request: Request, upload_id: int) -> Response:
        upload = get_or_404(Upload.objects.select_related("kg", "system"), "upload", pk=upload_id)
        if upload.created_by_id != request.user.pk:
            require_staff(request.user, "another person's upload")
        return Response(s.UploadOut(upload).data)


class SystemList(APIView):
    @extend_schema(responses={200: s.SystemOut(many=True), **errors(401, 403, 404)}, summary="The KG's systems")
    def get(self, request: Request, kg: str) -> Response:
        systems = System.objects.filter(kg=_kg(request, kg)).order_by("name")
        return Response(s.SystemOut(systems, many=True).data)

    @extend_schema(request=s.TrainIn, responses={202: s.SystemOut, **errors(400, 403, 404, 409)},
                   summary="Train a system (in the background: poll its status)")
    def post(self, request: Request, kg: str) -> Response:
        from pooling.services.systems import SystemServiceError, request_training

        knowledge_graph = _kg(request, kg)
        require_staff(request.user, "training a system")
        data = s.TrainIn(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        architecture, name = options.pop("architecture"), options.pop("name", None)
        system = _start(transaction.atomic()(lambda: request_training(knowledge_graph, architecture, name=name,
                                                                      options=options)),
                        SystemServiceError, ("already exists",))
        system.refresh_from_db()
        return _accepted(s.SystemOut(system).data)


class SystemUpload(APIView):
    parser_classes = UPLOAD_PARSERS

    @extend_schema(request={"multipart/form-data": s.SystemUploadIn}, responses={202: s.UploadOut, **errors(400, 403, 404, 409)},
                   summary="Import a system: a score matrix or TREC run on a sample, or a PyKEEN checkpoint "
                           "(in the background: follow /uploads/{id}/)")
    def post(self, request: Request, kg: str) -> Response:
        from pooling.services.uploads import SYSTEM_FILES, UploadError, create_upload

        knowledge_graph = _kg(request, kg)
        require_staff(request.user, "importing a system")
        data = s.SystemUploadIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        sample = None
        if v["kind"] != "checkpoint":
            if not v.get("sample"):
                raise BadRequest({"sample": ["a score matrix or run ranks a sample: name it"]})
            sample = get_or_404(Sample.objects.filter(kg=knowledge_graph), "sample", name=v["sample"])
        files = {role: v[role] for role in SYSTEM_FILES[v["kind"]] if v.get(role) is not None}
        other = [role for role in ("scores", "entities", "questions", "run", "checkpoint")
                 if v.get(role) is not None and role not in files]
        if other:
            raise BadRequest(f"a {v['kind']} import takes no {other[0]} file")
        params = {"description": v["description"], "model": v.get("model", ""), "k": v.get("k")}
        upload = _start(lambda: create_upload(v["kind"], v["name"], files, kg=knowledge_graph, sample=sample,
                                              params=params, user=request.user), UploadError, ("exists",))
        upload.refresh_from_db()
        return _accepted(s.UploadOut(upload).data)


class SystemDetail(APIView):
    @extend_schema(responses={200: s.SystemOut, **errors(401, 403, 404)}, summary="A system and its status")
    def get(self, request: Request, kg: str, system: str) -> Response:
        found = get_or_404(System.objects.filter(kg=_kg(request, kg)), "system", name=system)
        return Response(s.SystemOut(found).data)


def _samples(kg: KnowledgeGraph):
    return Sample.objects.filter(kg=kg).annotate(num_questions=Count("questions")).order_by("name")


class SampleList(APIView):
    @extend_schema(responses={200: s.SampleOut(many=True), **errors(401, 403, 404)}, summary="The KG's samples")
    def get(self, request: Request, kg: str) -> Response:
        return Response(s.SampleOut(_samples(_kg(request, kg)), many=True).data)

    @extend_schema(request=s.SampleIn, responses={201: s.SampleOut, **errors(400, 403, 404, 409)},
                   summary="Draw a seeded sample of test triples (uniform or stratified by relation)")
    def post(self, request: Request, kg: str) -> Response:
        from pooling.services.samples import SampleError, draw_sample

        knowledge_graph = _kg(request, kg)
        require_staff(request.user, "drawing a sample")
        data = s.SampleIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            sample = draw_sample(knowledge_graph, size=v["size"], seed=v["seed"], stratified=v["stratified"],
                                 name=v.get("name"))
        except SampleError as exc:
            raise (Conflict if "already exists" in str(exc) else BadRequest)(str(exc)) from None
        return Response(s.SampleOut(_samples(knowledge_graph).get(pk=sample.pk)).data, status=status.HTTP_201_CREATED)


class SampleDetail(APIView):
    @extend_schema(responses={200: s.SampleOut, **errors(401, 403, 404)}, summary="A sample")
    def get(self, request: Request, kg: str, sample: str) -> Response:
        return Response(s.SampleOut(get_or_404(_samples(_kg(request, kg)), "sample", name=sample)).data)


def _pools():
    return Pool.objects.select_related("sample__kg").annotate(num_entries=Count("entries", distinct=True))


def _pool_out(pool: Pool) -> dict:
    pool.system_names = list(pool.systems.order_by("name").values_list("name", flat=True))
    return s.PoolOut(pool).data


def _pool(request: Request, pool_id: int) -> Pool:
    pool = get_or_404(_pools(), "pool", pk=pool_id)
    check_kg_access(request.user, pool.sample.kg)
    return pool


class PoolList(APIView):
    @extend_schema(parameters=[OpenApiParameter("kg", str, description="only this KG's pools")],
                   responses={200: s.PoolOut(many=True), **errors(401)}, summary="Pools")
    def get(self, request: Request) -> Response:
        pools = _pools().filter(kg_filter(request.user, "sample__kg")).order_by("pk")
        if request.query_params.get("kg"):
            pools = pools.filter(sample__kg__name=request.query_params["kg"])
        return Response([_pool_out(pool) for pool in pools])

    @extend_schema(request=s.PoolIn, responses={202: s.PoolOut, **errors(400, 403, 404, 409)},
                   summary="Build the depth-k pool of systems on a sample (in the background: poll its status)")
    def post(self, request: Request) -> Response:
        from pooling.services.pools import PoolError, create_pool, start_pool_build

        require_staff(request.user, "building a pool")
        data = s.PoolIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        kg = _kg(request, v["kg"])
        sample = get_or_404(Sample.objects.filter(kg=kg), "sample", name=v["sample"])
        systems = {system.name: system for system in System.objects.filter(kg=kg, name__in=v["systems"])}
        missing = [name for name in v["systems"] if name not in systems]
        if missing:
            raise BadRequest({"systems": [f"no system {missing[0]!r} in {kg.name}"]})
        @transaction.atomic
        def build() -> Pool:
            pool = create_pool(sample, [systems[n] for n in v["systems"]], v["depth"], name=v.get("name"))
            start_pool_build(pool, robust=True)
            return pool

        pool = _start(build, PoolError, ("already exists",))
        return _accepted(_pool_out(_pools().get(pk=pool.pk)))


class PoolDetail(APIView):
    @extend_schema(responses={200: s.PoolOut, **errors(401, 403, 404)},
                   summary="A pool and its build's progress (ranking chunks done / total)")
    def get(self, request: Request, pool_id: int) -> Response:
        return Response(_pool_out(_pool(request, pool_id)))


class PoolEntries(APIView):
    pagination_class = Pages

    @extend_schema(parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int),
                               OpenApiParameter("max_depth", int, description="only entries of depth <= max_depth")],
                   responses={200: s.PoolEntryPage, **errors(400, 401, 403, 404)},
                   summary="The pool's candidates with their provenance, by depth (paginated)")
    def get(self, request: Request, pool_id: int) -> Response:
        pool = _pool(request, pool_id)
        entries = PoolEntry.objects.filter(pool=pool).order_by("depth", "pk").values(
            "pk", "head__key", "relation__key", "tail__key", "depth", "num_systems")
        max_depth = request.query_params.get("max_depth", "")
        if max_depth:
            if not (max_depth.isascii() and max_depth.isdigit() and len(max_depth) < 10):
                raise BadRequest({"max_depth": ["a whole number"]})
            entries = entries.filter(depth__lte=int(max_depth))
        paginator = Pages()
        page = paginator.paginate_queryset(entries, request, view=self)
        hits = defaultdict(list)
        for entry, system, qid, rank in PoolHit.objects.filter(entry_id__in=[e["pk"] for e in page]).order_by(
                "entry_id", "question__position", "system__name").values_list("entry_id", "system__name",
                                                                              "question__qid", "rank"):
            hits[entry].append({"system": system, "qid": qid, "rank": rank})
        rows = [{"head": e["head__key"], "relation": e["relation__key"], "tail": e["tail__key"], "depth": e["depth"],
                 "num_systems": e["num_systems"], "hits": hits[e["pk"]]} for e in page]
        return paginator.get_paginated_response(s.PoolEntryOut(rows, many=True).data)
