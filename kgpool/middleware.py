"""Response headers Django has no setting for."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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
        return self.process_response(request, self.get_response(request))

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        """Django's response hook, which the judging lane calls as it calls Django's own middleware's."""
        if self.policy and CSP_HEADER not in response:
            response[CSP_HEADER] = self.policy
        return response


QUERY_COUNT_HEADER = "X-Kgpool-Queries"


@dataclass
class QueryCount:
    count: int = 0


@contextmanager
def counted_queries() -> Iterator[QueryCount | None]:
    """The SQL statements run inside the block (on the default database), or None when ``KGPOOL_COUNT_QUERIES``
    is off: the load benchmark reads them per request (this middleware; the judging lane, ``annotation/api/lane``)."""
    if not settings.KGPOOL_COUNT_QUERIES:
        yield None
        return
    from django.db import connection

    counted = QueryCount()

    def count(execute, sql, params, many, context):
        counted.count += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        yield counted


class QueryCountMiddleware:
    """Adds the number of SQL statements the request ran (``X-Kgpool-Queries``) to every response. Installed only
    with ``KGPOOL_COUNT_QUERIES=true`` (settings): the load benchmark reads it to print queries per request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with counted_queries() as queries:
            response = self.get_response(request)
        if queries is not None:
            response[QUERY_COUNT_HEADER] = str(queries.count)
        return response
