"""The judging lane (issue 21): the API's next-item and submit requests that offer a token answered straight from
the WSGI call, without Django's middleware chain, URL dispatch and DRF around the view.

At 50 annotators with think time, a request costs its own work plus a fixed cost for everything around it that
runs cold after each pause; the lane drops most of the fixed part (README, "Judging API load"). It serves only
what it can answer exactly as the full stack would, and hands everything else to Django untouched:

- a POST that the URLconf routes to the next-item or judgment view (/api/ and /api/v1/), no query string, no cookie, an
  ``Authorization: Token`` header, an allowed Host, a JSON body (submit), an Accept that DRF answers with JSON,
  no HTTPS redirect due, and no middleware in settings.MIDDLEWARE that it was not written for (``KNOWN_MIDDLEWARE``);
- then the shared hot-path functions (``api/hot_path``) on PostgreSQL; when they return None (invalid token, not
  an annotator, not the caller's hand-out, another database) or a service refuses (400 / 409), the request goes to
  Django, which answers it as always: the lane wrote nothing (a refusal rolls its transaction back).

The answer is the view's: the same body rendered by DRF's JSON renderer, the headers DRF's view and the response
middleware set (``RESPONSE_MIDDLEWARE``: security headers, X-Frame-Options, Content-Length, the CSP), the
request_started / request_finished signals (persistent database connections are checked as on every request).
``tests/test_annotation_judging_lane.py`` compares the lane's answers with Django's, header by header.
``KGPOOL_JUDGING_PATH=drf`` turns the lane off (the same statements under DRF: the benchmark's comparison).
"""
from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from django.conf import settings
from django.core import signals
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.db import connections, router
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest, get_script_name
from django.http import HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import Resolver404, get_urlconf, resolve, set_script_prefix
from django.utils.http import parse_header_parameters
from rest_framework.exceptions import NotAcceptable, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer

from annotation.api import serializers as s
from annotation.api.hot_path import Answered, fast_next_item, fast_submit
from annotation.api.plain_validation import plain_validated
from annotation.api.views import NextItem, SubmitJudgment
from annotation.models import Item
from annotation.services.errors import AnnotationError
from kgpool.middleware import QUERY_COUNT_HEADER, ContentSecurityPolicyMiddleware, counted_queries
from kgpool.security import offered_token

logger = logging.getLogger(__name__)

LANE = "fast"  # KGPOOL_JUDGING_PATH: the lane serves; "drf" / "legacy" leave every request to Django
#: the response middleware (settings.MIDDLEWARE) whose headers an API answer gets, applied in MIDDLEWARE's
#: (reverse) order; the others add nothing to a token request's answer (tests/test_annotation_judging_lane.py)
RESPONSE_MIDDLEWARE = (XFrameOptionsMiddleware, CommonMiddleware, SecurityMiddleware, ContentSecurityPolicyMiddleware)
#: the middleware the lane was written for: with any other in settings.MIDDLEWARE (which may refuse requests or set
#: headers the lane knows nothing of) it steps aside and Django answers every request
KNOWN_MIDDLEWARE = frozenset({
    "kgpool.middleware.QueryCountMiddleware",
    "kgpool.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
})
_ACCEPTED = frozenset({"", "*/*", "application/json", "application/*"})  # DRF renders JSON for these


class JudgingLane:
    """WSGI application: the lane in front of ``django_app`` (the project's WSGIHandler)."""

    def __init__(self, django_app: Callable):
        self.django_app = django_app
        self._middleware: list | None = None
        self._headers: dict[type, dict[str, str]] = {}

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if not _candidate(environ) or connections[router.db_for_write(Item)].vendor != "postgresql":
            return self.django_app(environ, start_response)
        answered = self._answer(environ)
        if answered is None:
            return self.django_app(environ, start_response)
        request, response = answered
        response._handler_class = WSGIHandler  # close() sends request_finished as Django's answers do
        response._resource_closers.append(request.close)
        status = f"{response.status_code} {response.reason_phrase}"
        start_response(status, list(response.items()))
        return response

    def _answer(self, environ: dict) -> tuple[WSGIRequest, HttpResponse] | None:
        """(the request, its answer), or None for Django to answer (the body put back for it to read)."""
        request = WSGIRequest(environ)
        try:
            view, kwargs = lane_route(request.path_info)
            request.get_host()  # ALLOWED_HOSTS, as CommonMiddleware checks it
            if settings.SECURE_SSL_REDIRECT and not request.is_secure():
                return None  # SecurityMiddleware redirects
            caller = offered_token(request)
            if caller is None or view not in (NextItem, SubmitJudgment):
                return None
            data = None
            if view is SubmitJudgment:
                data = _judgment_data(request)  # reads the body: put back below when Django answers
                if data is None:
                    return None
        except (Resolver404, DisallowedHost, RequestDataTooBig, OSError):  # OSError: the client went away
            return None
        finally:
            if "_body" in request.__dict__:
                environ["wsgi.input"] = io.BytesIO(request.body)
        set_script_prefix(get_script_name(environ))
        signals.request_started.send(sender=WSGIHandler, environ=environ)
        try:
            with counted_queries() as queries:
                answered = _serve(view, kwargs, caller, data)
        except AnnotationError:
            answered = None  # a refusal: nothing was written; Django's view gives its 400 / 409
        except Exception:  # noqa: BLE001 - whatever failed, the full stack answers (and logs) it
            logger.exception("judging lane: %s failed; Django answers it", request.path_info)
            answered = None
        if answered is None:
            signals.request_finished.send(sender=WSGIHandler)
            return None
        return request, self._response(request, view, answered, queries)

    def _response(self, request: WSGIRequest, view: type, answered: Answered, queries) -> HttpResponse:
        response = HttpResponse(JSONRenderer().render(answered.body), status=answered.status,
                                content_type="application/json")
        for name, value in self._view_headers(view).items():
            response[name] = value
        if queries is not None:
            response[QUERY_COUNT_HEADER] = str(queries.count)
        for middleware in self._response_middleware():
            response = middleware.process_response(request, response)
        return response

    def _response_middleware(self) -> list:
        if self._middleware is None:
            self._middleware = [cls(_unused_get_response) for cls in RESPONSE_MIDDLEWARE]
        return self._middleware

    def _view_headers(self, view: type) -> dict[str, str]:
        """What DRF's view sets on its answer (Allow, Vary: Accept), from the view class itself."""
        if view not in self._headers:
            self._headers[view] = dict(view().default_response_headers)
        return self._headers[view]


def _unused_get_response(request):  # the lane calls only process_response
    raise AssertionError("not called")


def _candidate(environ: dict) -> bool:
    """Cheap checks on the raw request before anything is built."""
    if environ.get("REQUEST_METHOD") != "POST" or environ.get("QUERY_STRING") or "HTTP_COOKIE" in environ:
        return False
    if settings.KGPOOL_JUDGING_PATH != LANE or not KNOWN_MIDDLEWARE.issuperset(settings.MIDDLEWARE):
        return False
    if not environ.get("HTTP_AUTHORIZATION", "")[:6].lower() == "token ":
        return False
    path = environ.get("PATH_INFO", "")
    if not (path.endswith("/next-item/") or path.endswith("/judgment/")):
        return False
    accept = environ.get("HTTP_ACCEPT", "").strip()
    return accept in _ACCEPTED or _drf_answers_plain_json(accept)


#: a submit's path: the hand-out's id is the only part that differs between two submits to one campaign
_SUBMIT_PATH = re.compile(r"(?P<before>.*/hand-outs/)(?P<hand_out>[0-9]+)(?P<after>/judgment/)")


def lane_route(path_info: str) -> tuple[type | None, dict]:
    """(the view class the URLconf routes ``path_info`` to, its kwargs), as ``resolve`` gives them; raises
    Resolver404. Django resolves every request afresh, walking the URLconf (0.1 ms a request here, 6 % of the
    lane's Python at think time); the lane asks it once per path, and once per campaign for submits: their
    path routes as the same path with hand-out 0 does (``<int:hand_out>`` matches any digits; no route names a
    hand-out by number, tests/test_annotation_judging_lane.py checks it)."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF  # the cache's key: settings change in tests
    submit = _SUBMIT_PATH.fullmatch(path_info)
    if submit is not None:
        view, kwargs = _resolved(urlconf, f"{submit['before']}0{submit['after']}")
        if "hand_out" in kwargs:
            return view, {**kwargs, "hand_out": int(submit["hand_out"])}
    view, kwargs = _resolved(urlconf, path_info)  # any other path (or route): resolved as it is
    return view, dict(kwargs)  # a copy: the cached one stays as resolved


@lru_cache(maxsize=256)
def _resolved(urlconf: str, path_info: str) -> tuple[type | None, dict]:
    match = resolve(path_info, urlconf)
    return getattr(match.func, "view_class", None), match.kwargs  # /api/ and /api/v1/ route to the same views


class _AcceptOnly:
    """What DRF's content negotiation reads of a request without a query string."""

    def __init__(self, accept: str):
        self.headers = {"accept": accept}
        self.query_params: dict = {}


@lru_cache(maxsize=64)
def _drf_answers_plain_json(accept: str) -> bool:
    """Whether both views' content negotiation answers this Accept header with the JSON renderer, media type
    plain application/json (no indent asked for): then the lane's answer is the view's. Asked of DRF once per
    distinct header (clients send one): "application/json, text/plain, */*" (axios) is, "text/html" is not."""
    for view in (NextItem, SubmitJudgment):
        instance = view()
        try:
            renderer, media_type = instance.get_content_negotiator().select_renderer(
                _AcceptOnly(accept), instance.get_renderers())
        except NotAcceptable:
            return False
        if type(renderer) is not JSONRenderer or media_type != JSONRenderer.media_type:
            return False
    return True


def _judgment_data(request: WSGIRequest) -> dict | None:
    """The submit's validated body, parsed as DRF parses JSON; None when DRF would answer otherwise (another
    content type, a parse error, invalid fields: its 400 comes from Django)."""
    if parse_header_parameters(request.META.get("CONTENT_TYPE", ""))[0] != "application/json":
        return None
    context = {"request": request, "encoding": request.encoding or settings.DEFAULT_CHARSET}  # as DRF's Request
    try:
        raw = JSONParser().parse(io.BytesIO(request.body), "application/json", context)
    except ParseError:
        return None
    plain = plain_validated(s.JudgmentIn, raw)  # the usual body, without DRF's field machinery
    if plain is not None:
        return plain
    data = s.JudgmentIn(data=raw)
    return dict(data.validated_data) if data.is_valid() else None


def _serve(view: type, kwargs: dict, caller, data: dict | None) -> Answered | None:
    if view is NextItem:
        return fast_next_item(kwargs["name"], caller)
    return fast_submit(kwargs["name"], kwargs["hand_out"], caller, data)
