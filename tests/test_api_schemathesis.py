"""API fuzzing with Schemathesis against the API's own OpenAPI schema (/api/schema/: the judging API and /api/v1/),
in-process on the Django WSGI app, as an annotator and as staff authenticated with an API token on a small
campaign: no request may end in a 5xx.

Path parameters are pointed at real objects most of the time (the campaign's name, the annotator's own open
hand-out), so the fuzzed bodies reach the services instead of stopping at a 404. Bounded: a few examples per
operation, no Hypothesis database, well under a minute.
"""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token

from annotation.models import Role
from annotation.services.distribution import next_item
from kgpool.wsgi import application
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The WSGI handler closes old connections at request start and end; inside the test's transaction that
    would close it (PostgreSQL). Django's test client disconnects the same handlers."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)

EXAMPLES = 12


def fuzz_every_operation(headers: dict[str, str], real: dict[str, object]) -> tuple[dict[str, set[int]], list[str]]:
    """Run every operation of the schema EXAMPLES times; path parameters point at ``real`` objects half the time
    (``name`` always). Returns the status codes seen per operation and the failures."""
    from schemathesis.checks import not_a_server_error

    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 40, [op.label for op in operations]  # judging + /api/v1/
    seen: dict[str, set[int]] = {}
    failures: list[str] = []

    for operation in operations:
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(), use_real=st.booleans())
        def fuzz(case, use_real):
            if case.path_parameters:
                for key, value in real.items():
                    if key in case.path_parameters and (use_real or key == "name"):
                        case.path_parameters[key] = value
            response = case.call(headers=headers)
            seen.setdefault(operation.label, set()).add(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{operation.label} {case.path_parameters} {case.body!r}: {response.status_code}")
            try:  # the same check as `schemathesis run --checks not_a_server_error`
                case.validate_response(response, checks=[not_a_server_error])
            except Exception as exc:  # a FailureGroup; also collected above with the request that caused it
                failures.append(f"{operation.label}: {exc}")

        fuzz()
    assert set(seen) == {op.label for op in operations}
    return seen, failures


def test_no_api_operation_answers_a_server_error(tmp_path):
    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "fuzzer", Role.ANNOTATOR, Role.ADJUDICATOR)
    token = Token.objects.create(user=annotator).key
    hand_out = next_item(campaign, annotator)
    real = {"name": campaign.name, "hand_out": hand_out.pk, "item_id": hand_out.item_id,
            "kg": campaign.pool.sample.kg.name, "pool_id": campaign.pool_id}
    seen, failures = fuzz_every_operation({"Authorization": f"Token {token}"}, real)
    assert not failures, "\n".join(failures[:20])
    # the fuzzing got past authentication and reached the views (not only 401/403/404)
    codes = set().union(*seen.values())
    assert codes & {200, 201} and codes & {400, 409}, seen


def test_no_api_operation_answers_a_server_error_to_staff(tmp_path, monkeypatch, settings):
    """As staff every /api/v1/ write is open: uploads, trainings, pool builds and evaluations are created and their
    background work queued (not run: this tests the API, the services have their own tests)."""
    from celery.app.task import Task
    from celery.canvas import Signature

    from evaluation.models import EvaluationRun
    from pooling.models import System, Upload

    settings.STORAGE_DIR = tmp_path / "storage"
    monkeypatch.setattr(Task, "delay", lambda self, *args, **kwargs: None)
    monkeypatch.setattr("pooling.services.pools.dispatch_pool_build", lambda *args, **kwargs: None)
    monkeypatch.setattr(Signature, "delay", lambda self, *args, **kwargs: None)  # evaluation stages (a chain)
    campaign = nationality_campaign(tmp_path)
    staff = member(campaign, "fuzz-staff", staff=True)
    owner = member(campaign, "owner", Role.ANNOTATOR)
    hand_out = next_item(campaign, owner)
    kg = campaign.pool.sample.kg
    system = System.objects.create(kg=kg, name="sys", origin=System.Origin.IMPORTED, status=System.Status.READY)
    upload = Upload.objects.create(kind=Upload.Kind.KG, name="up", folder="uploads/none", created_by=staff)
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)
    real = {"name": campaign.name, "hand_out": hand_out.pk, "kg": kg.name, "system": system.name,
            "sample": campaign.pool.sample.name, "pool_id": campaign.pool_id, "upload_id": upload.pk,
            "run_id": run.pk, "username": "owner", "role": "annotator", "fmt": "labels"}
    token = Token.objects.create(user=staff).key
    seen, failures = fuzz_every_operation({"Authorization": f"Token {token}"}, real)
    assert not failures, "\n".join(failures[:20])
    v1 = {label: codes for label, codes in seen.items() if "/api/v1/" in label}
    assert {201, 202} & set().union(*v1.values()) and 400 in set().union(*v1.values()), v1
