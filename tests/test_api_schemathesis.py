"""API fuzzing with Schemathesis against the API's own OpenAPI schema (/api/schema/), in-process on the Django WSGI
app, as an annotator authenticated with an API token on a small campaign: no request may end in a 5xx.

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


def test_no_api_operation_answers_a_server_error(tmp_path):
    from schemathesis.checks import not_a_server_error

    campaign = nationality_campaign(tmp_path)
    annotator = member(campaign, "fuzzer", Role.ANNOTATOR, Role.ADJUDICATOR)
    token = Token.objects.create(user=annotator).key
    hand_out = next_item(campaign, annotator)
    headers = {"Authorization": f"Token {token}"}
    real = {"name": campaign.name, "hand_out": hand_out.pk, "item_id": hand_out.item_id}

    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 8, [op.label for op in operations]
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

    assert not failures, "\n".join(failures[:20])
    assert set(seen) == {op.label for op in operations}
    # the fuzzing got past authentication and reached the views (not only 401/403/404)
    codes = set().union(*seen.values())
    assert codes & {200, 201} and codes & {400, 409}, seen
