"""The judging lane (issue 21, ``annotation/api/lane``) answers next-item and submit exactly as Django's full stack
does, header by header, and hands every other request to Django with its body intact.

Requests go through WSGI callables here (the lane, and Django's WSGI handler alone), as gunicorn calls
them: Django's test client would bypass the lane. The lane serves on PostgreSQL; on SQLite the hot-path
statements step aside and Django answers everything (the same tests, with ``served_by`` saying who answered)."""
from __future__ import annotations

import io
import json
import logging
import re

import pytest
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core import signals
from django.db import close_old_connections, connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation.api import hot_path
from annotation.api.lane import JudgingLane
from annotation.models import Assignment, Judgment, Role
from tests._annotation_support import star_campaign, users

pytestmark = pytest.mark.django_db

SOURCE = "https://en.wikipedia.org/wiki/X"
POSTGRES = connection.vendor == "postgresql"


@pytest.fixture(autouse=True)
def _lane_on(settings):
    settings.KGPOOL_JUDGING_PATH = "fast"
    cache.clear()
    yield
    cache.clear()


class Recorder:
    """Django's WSGI application, counting the requests the lane handed to it. Built per test: a WSGI handler reads
    its middleware's settings (the security headers) once, when it is made."""

    def __init__(self):
        self.calls = 0
        self.app = WSGIHandler()

    def __call__(self, environ, start_response):
        self.calls += 1
        return self.app(environ, start_response)


def call(app, path: str, key: str | None, body=None, *, content_type="application/json", raw: bytes | None = None,
         **extra) -> tuple[int, dict[str, str], bytes]:
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "", "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1", "HTTP_ACCEPT": "*/*", "wsgi.input": io.BytesIO(data), "wsgi.errors": io.StringIO(),
        "wsgi.url_scheme": "http", "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": True,
        "wsgi.run_once": False, "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": content_type,
    }
    if key is not None:
        environ["HTTP_AUTHORIZATION"] = f"Token {key}"
    environ.update(extra)
    answer: dict = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = int(status.split()[0])
        answer["headers"] = dict(headers)

    # As Django's test client does: the test's connection, inside the test's transaction, stays open (the
    # request signals would close it as a connection left outside autocommit).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        chunks = app(environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
    return answer["status"], answer["headers"], content


def next_url(name: str, base: str = "/api/") -> str:
    return f"{base}campaigns/{name}/next-item/"


def judgment_url(name: str, hand_out: int, base: str = "/api/") -> str:
    return f"{base}campaigns/{name}/hand-outs/{hand_out}/judgment/"


def setup(tmp_path, name: str, annotators: int = 1):
    campaign = star_campaign(tmp_path, items=6, name=name)
    people = users(campaign, Role.ANNOTATOR, annotators)
    return campaign, people, [Token.objects.create(user=u).key for u in people]


@pytest.mark.parametrize("base", ["/api/", "/api/v1/"])
def test_next_item_and_submit_answer_as_django_does(tmp_path, base):
    campaign, (alice,), (key,) = setup(tmp_path, "same")
    django = Recorder()
    lane = JudgingLane(django)
    status, headers, body = call(lane, next_url(campaign.name, base), key)
    assert status == 200 and django.calls == (0 if POSTGRES else 1)
    handed = json.loads(body)
    assert Assignment.objects.get(pk=handed["hand_out"]).user == alice
    # The same request again (a reload gives the same open hand-out) through Django alone: byte for byte the same
    # answer, every header the same (Content-Length included).
    assert call(WSGIHandler(), next_url(campaign.name, base), key) == (status, headers, body)
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" in headers and headers["Allow"] == "POST, OPTIONS"

    answer = {"answer": "Y", "source_url": SOURCE, "request_id": handed["request_id"], "next": True}
    url = judgment_url(campaign.name, handed["hand_out"], base)
    status, headers, body = call(lane, url, key, answer)
    assert status == 201 and django.calls == (0 if POSTGRES else 2)
    created = json.loads(body)
    assert Judgment.objects.get(pk=created["id"]).user == alice and created["next"]["hand_out"] is not None
    # The repeat (same request id) answers 200 with the recorded judgment and the same next hand-out: the lane's
    # repeat and Django's are the same bytes and headers.
    lane_repeat = call(lane, url, key, answer)
    django_repeat = call(WSGIHandler(), url, key, answer)
    assert lane_repeat == django_repeat
    assert lane_repeat[0] == 200 and json.loads(lane_repeat[2]) == created
    assert lane_repeat[1] == headers  # the 201's headers: only the status line differs
    assert Judgment.objects.filter(item__campaign=campaign).count() == 1
    assert django.calls == (0 if POSTGRES else 3)


def test_the_lane_sends_the_request_signals(tmp_path):
    """request_started / request_finished, as Django's handler sends them (persistent connections are checked on
    them), once each per request the lane answers."""
    campaign, _people, (key,) = setup(tmp_path, "signals")
    sent = []

    def started(sender, **kwargs):
        sent.append("started")

    def finished(sender, **kwargs):
        sent.append("finished")

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        django = Recorder()
        assert call(JudgingLane(django), next_url(campaign.name), key)[0] == 200
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert sent == ["started", "finished"]


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_security_settings_reach_the_lanes_answers(tmp_path, settings, secure):
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_REFERRER_POLICY = "no-referrer"
    settings.X_FRAME_OPTIONS = "SAMEORIGIN"
    campaign, _people, (key,) = setup(tmp_path, "secure")
    lane = JudgingLane(Recorder())
    scheme = {"wsgi.url_scheme": "https" if secure else "http"}
    answered = call(lane, next_url(campaign.name), key, **scheme)
    assert answered == call(WSGIHandler(), next_url(campaign.name), key, **scheme)
    headers = answered[1]
    assert headers["Referrer-Policy"] == "no-referrer" and headers["X-Frame-Options"] == "SAMEORIGIN"
    assert ("Strict-Transport-Security" in headers) == secure


def test_an_https_redirect_is_djangos(tmp_path, settings):
    settings.SECURE_SSL_REDIRECT = True
    campaign, _people, (key,) = setup(tmp_path, "redirect")
    django = Recorder()
    status, headers, _body = call(JudgingLane(django), next_url(campaign.name), key)
    assert status == 301 and headers["Location"].startswith("https://") and django.calls == 1
    assert not Assignment.objects.exists()


def test_query_count_header(tmp_path, settings):
    """The benchmark's statement count per request (``KGPOOL_COUNT_QUERIES``) comes with the lane's answers too."""
    settings.KGPOOL_COUNT_QUERIES = True
    campaign, _people, (key,) = setup(tmp_path, "counted")
    with CaptureQueriesContext(connection) as ran:
        status, headers, _body = call(JudgingLane(Recorder()), next_url(campaign.name), key)
    assert status == 200
    if POSTGRES:
        # every statement the request ran, as Django's debug cursor records them (the test's transaction makes
        # savepoints of the request's transactions: counted by both)
        assert int(headers["X-Kgpool-Queries"]) == len(ran.captured_queries) > 0
    else:  # Django answered, and its counting middleware is installed only when the server starts with the setting
        assert "X-Kgpool-Queries" not in headers


@pytest.mark.parametrize("case", ["bad-token", "not-member", "no-campaign", "cookie", "html", "query", "host"])
def test_what_the_lane_does_not_serve_django_answers(tmp_path, settings, case):
    campaign, _people, (key,) = setup(tmp_path, "handed")
    outsider = users(campaign, Role.ADJUDICATOR, 1, prefix="outsider")[0]
    django = Recorder()
    lane = JudgingLane(django)
    name, extra = campaign.name, {}
    if case == "bad-token":
        key = "0" * 40
    elif case == "not-member":
        key = Token.objects.create(user=outsider).key
    elif case == "no-campaign":
        name = "no-such-campaign"
    elif case == "cookie":
        extra = {"HTTP_COOKIE": "sessionid=abc"}
    elif case == "html":
        extra = {"HTTP_ACCEPT": "text/html"}
    elif case == "query":
        extra = {"QUERY_STRING": "format=json"}
    elif case == "host":
        extra = {"HTTP_HOST": "evil.example"}
    status, _headers, _body = call(lane, next_url(name), key, **extra)
    expected = {"bad-token": 401, "not-member": 403, "no-campaign": 404, "host": 400}.get(case, 200)
    assert status == expected and django.calls == 1
    assert Assignment.objects.count() == (1 if expected == 200 else 0)


def test_a_submit_the_lane_does_not_serve_reaches_django_with_its_body(tmp_path):
    campaign, _people, (key,) = setup(tmp_path, "bodies")
    django = Recorder()
    lane = JudgingLane(django)
    handed = json.loads(call(lane, next_url(campaign.name), key)[2])
    url = judgment_url(campaign.name, handed["hand_out"])
    calls = django.calls
    status, _h, body = call(lane, url, key, {"source_url": SOURCE})  # no answer: DRF's 400 names the field
    assert status == 400 and "answer" in json.loads(body) and django.calls == calls + 1
    status, _h, body = call(lane, url, key, raw=b'{"answer": "Y", ', content_type="application/json")
    assert status == 400 and "JSON parse error" in json.loads(body)["detail"] and django.calls == calls + 2
    form = f"answer=Y&source_url={SOURCE}&request_id={handed['request_id']}".encode()
    status, _h, body = call(lane, url, key, raw=form, content_type="application/x-www-form-urlencoded")
    assert status == 201 and json.loads(body)["answer"] == "Y" and django.calls == calls + 3  # DRF reads forms too
    # A refusal (a changed answer, 409) rolls the lane's transaction back; Django gives the answer
    status, _h, body = call(lane, url, key, {"answer": "N", "source_url": SOURCE, "request_id": "other"})
    assert status == 409 and django.calls == calls + 4
    assert list(Judgment.objects.values_list("answer", flat=True)) == ["Y"]


def test_a_body_in_another_charset_is_read_as_drf_reads_it(tmp_path):
    """``Content-Type: application/json; charset=latin-1``: DRF decodes the body with that charset; so does the
    lane (the quote stored is the same text)."""
    campaign, _people, (key,) = setup(tmp_path, "charset")
    django = Recorder()
    lane = JudgingLane(django)
    handed = json.loads(call(lane, next_url(campaign.name), key)[2])
    body = json.dumps({"answer": "Y", "source_url": SOURCE, "quote": "Café au lait"}, ensure_ascii=False)
    status, _h, answered = call(lane, judgment_url(campaign.name, handed["hand_out"]), key, raw=body.encode("latin-1"),
                                content_type="application/json; charset=latin-1")
    assert status == 201 and json.loads(answered)["quote"] == "Café au lait"
    assert Judgment.objects.get().quote == "Café au lait"
    assert django.calls == (0 if POSTGRES else 2)


@pytest.mark.skipif(not POSTGRES, reason="the lane serves on PostgreSQL only")
def test_a_failure_in_the_lane_is_logged_and_django_answers(tmp_path, monkeypatch, caplog):
    campaign, _people, (key,) = setup(tmp_path, "broken")

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("annotation.api.lane.fast_next_item", broken)
    django = Recorder()
    with caplog.at_level(logging.ERROR, logger="annotation.api.lane"):
        status, _headers, body = call(JudgingLane(django), next_url(campaign.name), key)
    assert status == 200 and json.loads(body)["hand_out"] is not None and django.calls == 1
    assert "judging lane" in caplog.text and "boom" in caplog.text


@pytest.mark.parametrize("path", ["drf", "legacy"])
def test_other_judging_paths_leave_every_request_to_django(tmp_path, settings, path):
    settings.KGPOOL_JUDGING_PATH = path
    campaign, _people, (key,) = setup(tmp_path, f"path-{path}")
    django = Recorder()
    status, _headers, _body = call(JudgingLane(django), next_url(campaign.name), key)
    assert status == 200 and django.calls == 1


def test_the_lane_serves_what_the_views_serve():
    """The views and the lane share the hot path's functions: one place for what next-item and submit answer."""
    from annotation.api import lane, views

    assert views.fast_next_item is hot_path.fast_next_item is lane.fast_next_item
    assert views.fast_submit is hot_path.fast_submit is lane.fast_submit


def test_the_lane_steps_aside_for_middleware_it_was_not_written_for(tmp_path, settings):
    """A middleware the lane does not know may refuse requests or set headers: with one in MIDDLEWARE, Django answers
    every request, through that middleware."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.gzip.GZipMiddleware"]
    campaign, _people, (key,) = setup(tmp_path, "unknown-mw")
    django = Recorder()
    status, headers, _body = call(JudgingLane(django), next_url(campaign.name), key)
    assert status == 200 and django.calls == 1 and "Accept-Encoding" in headers["Vary"]


@pytest.mark.skipif(not POSTGRES, reason="the lane serves on PostgreSQL only")
@pytest.mark.parametrize("accept, served", [
    ("application/json, text/plain, */*", True),  # axios's default
    ("application/json;q=0.9, */*;q=0.8", False),  # DRF answers application/json;q=0.9: Django's
    ("application/json; indent=4", False),  # DRF indents its JSON
    ("text/html", False),  # the browsable API
    ("image/png", False),  # DRF's 406
])
def test_an_accept_header_is_served_when_drf_answers_it_with_plain_json(tmp_path, accept, served):
    campaign, _people, (key,) = setup(tmp_path, "accepts")
    call(WSGIHandler(), next_url(campaign.name), key)  # the hand-out is open: the next two answers are the same
    django = Recorder()
    answered = call(JudgingLane(django), next_url(campaign.name), key, HTTP_ACCEPT=accept)
    assert django.calls == (0 if served else 1)
    by_django = call(WSGIHandler(), next_url(campaign.name), key, HTTP_ACCEPT=accept)
    if served:  # byte for byte Django's answer, headers included
        assert answered == by_django and answered[1]["Content-Type"] == "application/json"
    assert answered[0] == by_django[0] == (406 if accept == "image/png" else 200)


def _all_routes(patterns, prefix: str = "") -> list[str]:
    """Every route of the URLconf, its full pattern as text (includes walked)."""
    from django.urls import URLResolver

    routes = []
    for pattern in patterns:
        text = prefix + str(pattern.pattern)
        routes.extend(_all_routes(pattern.url_patterns, text) if isinstance(pattern, URLResolver) else [text])
    return routes


def test_no_route_names_a_hand_out_by_number():
    """lane_route resolves a submit's path with the hand-out's id replaced by 0: exact only while every route takes
    a hand-out's id as a converter, not as literal digits."""
    from django.urls import get_resolver

    routes = _all_routes(get_resolver().url_patterns)
    assert any("hand-outs/<int:hand_out>/judgment/" in route for route in routes)
    assert [route for route in routes if re.search(r"hand-outs/[0-9]", route)] == []


@pytest.mark.parametrize("path", [
    "/api/campaigns/c1/next-item/", "/api/v1/campaigns/c-2/next-item/",
    "/api/campaigns/c1/hand-outs/0/judgment/", "/api/campaigns/c1/hand-outs/7/judgment/",
    "/api/v1/campaigns/c1/hand-outs/123456789/judgment/", "/api/campaigns/c1/hand-outs/007/judgment/",
    "/api/campaigns/c1/hand-outs/7/", "/api/campaigns/c1/hand-outs/7/skip/", "/api/campaigns/c1/progress/",
    "/campaigns/c1/judge/7/", "/api/campaigns/c1/hand-outs/x7/judgment/", "/api/campaigns/c%201/next-item/",
    "/api/campaigns/c1/hand-outs/7/judgment/extra/", "/api/campaigns/c1/hand-outs//judgment/", "/nothing/judgment/",
])
def test_the_lanes_route_is_djangos(path):
    """lane_route gives what resolve gives (view class and kwargs), or the same Resolver404, asked twice (cached)."""
    from django.urls import Resolver404, resolve

    from annotation.api.lane import lane_route

    try:
        match = resolve(path)
    except Resolver404:
        for _ in range(2):
            with pytest.raises(Resolver404):
                lane_route(path)
        return
    for _ in range(2):
        view, kwargs = lane_route(path)
        assert (view, kwargs) == (getattr(match.func, "view_class", None), match.kwargs)
        assert type(kwargs.get("hand_out", 0)) is int
        kwargs["name"] = "changed"  # the caller's copy: the cached route stays as resolved


def test_the_lanes_route_follows_the_urlconf(settings):
    """Cached per URLconf: another ROOT_URLCONF (tests, a deployment's own) routes by its own patterns."""
    from django.urls import Resolver404

    from annotation.api.lane import lane_route

    assert lane_route("/api/campaigns/c1/next-item/")[0] is not None
    settings.ROOT_URLCONF = "annotation.api.urls"  # the API's patterns at the root
    with pytest.raises(Resolver404):
        lane_route("/api/campaigns/c1/next-item/")
    assert lane_route("/campaigns/c1/hand-outs/3/judgment/")[1] == {"name": "c1", "hand_out": 3}
