"""Response headers Django has no setting for."""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

CSP_HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    """Adds ``settings.KGPOOL_CONTENT_SECURITY_POLICY`` to every response that does not set its own (an empty
    policy turns the header off). First in MIDDLEWARE, so static files, redirects and 429 answers get it too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        self.policy = settings.KGPOOL_CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy and CSP_HEADER not in response:
            response[CSP_HEADER] = self.policy
        return response


QUERY_COUNT_HEADER = "X-Kgpool-Queries"


class QueryCountMiddleware:
    """Adds the number of SQL statements the request ran (``X-Kgpool-Queries``) to every response. Installed only
    with ``KGPOOL_COUNT_QUERIES=true`` (settings): the load benchmark reads it to print queries per request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.db import connection

        count = 0

        def counted(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counted):
            response = self.get_response(request)
        response[QUERY_COUNT_HEADER] = str(count)
        return response
