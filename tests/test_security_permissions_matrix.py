"""Security: who may open every URL of the project, blind double annotation against URL guessing, CSRF tokens in
every rendered POST form.

The URLconf is walked (``get_resolver``): every named pattern must have a row in MATRIX below (a new URL fails
``test_every_url_pattern_is_in_the_matrix`` until its row is written). Path parameters are filled with real
objects: ``name`` the campaign, ``hand_out`` / ``item_id`` a hand-out (item) of ANOTHER annotator ("owner", who is
none of the roles), ``run_id`` an evaluation run, ``fmt`` ``labels``, ``position`` 1. Admin site URLs are
checked by a rule (staff only) instead of rows.

Cells:  ok   the role may: 200, or 302 anywhere but a login page (a page that hands out work redirects to it)
        open like ok, and also 400/409 (a POST with no body: valid access, invalid input)
        deny 403 or 404
        login  302 to the login page (/login/ for the site, /admin/login/ for staff-only pages)
        401  the API's answer to anonymous requests (401, with DRF's WWW-Authenticate: Token)
        405  the method is not allowed
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.models import Assignment, Item, Role
from annotation.services.distribution import next_item
from pooling.models import Relation, System, Upload
from tests._annotation_web_support import member, nationality_campaign

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator", "adjudicator", "expert", "admin", "staff")

# url name                                method  anonymous annotator adjudicator expert admin staff
MATRIX_TABLE = """
home                                      GET     login     ok        ok          ok     ok    ok
login                                     GET     ok        ok        ok          ok     ok    ok
logout                                    POST    login     login     login       login  login login
annotation:campaigns                      GET     login     ok        ok          ok     ok    ok
annotation:campaign                       GET     login     ok        ok          ok     ok    ok
annotation:guidelines                     GET     login     ok        ok          ok     ok    ok
annotation:judge_next                     GET     login     ok        deny        deny   deny  deny
annotation:judge_item                     GET     login     deny      deny        deny   deny  deny
annotation:judge_skip                     POST    login     deny      deny        deny   deny  deny
annotation:judge_prepare_next             GET     login     deny      deny        deny   deny  deny
annotation:recent_answers                 GET     login     ok        deny        deny   deny  deny
annotation:undo                           POST    login     ok        deny        deny   deny  deny
annotation:adjudicate_next                GET     login     deny      ok          deny   deny  deny
annotation:adjudicate_item                GET     login     deny      deny        deny   deny  deny
annotation:audit_next                     GET     login     deny      deny        ok     deny  deny
annotation:audit_item                     POST    login     deny      deny        deny   deny  deny
annotation:manage                         GET     login     deny      deny        deny   ok    ok
annotation:manage_members                 GET     login     deny      deny        deny   ok    ok
annotation:manage_domains                 GET     login     deny      deny        deny   ok    ok
annotation:manage_order                   GET     login     deny      deny        deny   ok    ok
annotation:manage_guidelines              GET     login     deny      deny        deny   ok    ok
annotation:manage_simulation              GET     login     deny      deny        deny   ok    ok
annotation:manage_filter                  GET     login     deny      deny        deny   ok    ok
annotation:manage_filter_apply            POST    login     deny      deny        deny   ok    ok
annotation:manage_filter_revert           POST    login     deny      deny        deny   ok    ok
annotation:manage_templates               GET     login     deny      deny        deny   ok    ok
annotation:manage_template_preview        GET     login     deny      deny        deny   ok    ok
annotation:manage_agreement               GET     login     deny      deny        deny   ok    ok
annotation:manage_quality                 GET     login     deny      deny        deny   ok    ok
annotation:manage_quality_gold            POST    login     deny      deny        deny   open  open
annotation:manage_quality_recheck         POST    login     deny      deny        deny   open  open
annotation:manage_audit                   GET     login     deny      deny        deny   ok    ok
annotation:manage_audit_draw              POST    login     deny      deny        deny   open  open
annotation:manage_audit_apply             POST    login     deny      deny        deny   ok    ok
annotation:manage_export                  GET     login     deny      deny        deny   ok    ok
annotation:api_schema                     GET     ok        ok        ok          ok     ok    ok
annotation:api_docs                       GET     ok        ok        ok          ok     ok    ok
annotation:api_campaigns                  GET     401       ok        ok          ok     ok    ok
annotation:api_progress                   GET     401       ok        ok          ok     ok    ok
annotation:api_next_item                  POST    401       ok        deny        deny   deny  deny
annotation:api_item                       GET     401       deny      deny        deny   deny  deny
annotation:api_judgment                   POST    401       deny      deny        deny   deny  deny
annotation:api_skip                       POST    401       deny      deny        deny   deny  deny
annotation:api_undo                       POST    401       deny      deny        deny   deny  deny
annotation:api_next_adjudication          POST    401       deny      ok          deny   deny  deny
annotation:api_adjudicate                 POST    401       deny      deny        deny   deny  deny
evaluation:runs                           GET     login     ok        ok          ok     ok    ok
evaluation:new                            GET     login     login     login       login  login ok
evaluation:report                         GET     login     ok        ok          ok     ok    ok
evaluation:rerun                          POST    login     login     login       login  login ok
evaluation:progress                       GET     login     ok        ok          ok     ok    ok
evaluation:download                       GET     login     deny      deny        deny   deny  deny
api_v1:schema                             GET     ok        ok        ok          ok     ok    ok
api_v1:docs                               GET     ok        ok        ok          ok     ok    ok
api_v1:kgs                                GET     401       ok        ok          ok     ok    ok
api_v1:kg                                 GET     401       deny      deny        deny   ok    ok
api_v1:systems                            GET     401       deny      deny        deny   ok    ok
api_v1:system_import                      POST    401       deny      deny        deny   deny  open
api_v1:system                             GET     401       deny      deny        deny   ok    ok
api_v1:samples                            GET     401       deny      deny        deny   ok    ok
api_v1:sample                             GET     401       deny      deny        deny   ok    ok
api_v1:upload                             GET     401       deny      deny        deny   deny  ok
api_v1:pools                              GET     401       ok        ok          ok     ok    ok
api_v1:pool                               GET     401       deny      deny        deny   ok    ok
api_v1:pool_entries                       GET     401       deny      deny        deny   ok    ok
api_v1:campaigns                          GET     401       ok        ok          ok     ok    ok
api_v1:campaign                           GET     401       deny      deny        deny   ok    ok
api_v1:members                            GET     401       deny      deny        deny   ok    ok
api_v1:member                             DELETE  401       deny      deny        deny   ok    ok
api_v1:progress                           GET     401       deny      deny        deny   ok    ok
api_v1:quality                            GET     401       deny      deny        deny   ok    ok
api_v1:export                             GET     401       deny      deny        deny   ok    ok
api_v1:evaluations                        GET     401       ok        ok          ok     ok    ok
api_v1:evaluation                         GET     401       ok        ok          ok     ok    ok
api_v1:evaluation_results                 GET     401       open      open        open   open  open
api_v1:evaluation_file                    GET     401       deny      deny        deny   deny  deny
"""
# /api/v1/ also serves the judging endpoints of annotation.api (same views): namespace "judging", checked with the
# rows of their annotation: names.
ALIASES = {"judging": "annotation"}
# api_v1 lists (kgs, pools, campaigns, evaluations) answer everyone signed in with what they may see; the pooling
# objects themselves are for staff and the campaign's admins (admin of a campaign on that KG); uploads for their
# uploader and staff; creating anything is for staff (system_import as staff: 400, an empty form). member:
# DELETE of a role the user does not hold (expert's admin role): a no-op for managers. evaluation_results: 409
# while the run is not done; evaluation_file: 404 (no files), like evaluation:download.
# audit_item: no audit is drawn here, so position 1 is 404 even for the expert (audit_next is theirs).
# logout answers everyone with a redirect to the login page (LOGOUT_REDIRECT_URL).
# evaluation:download is 404 for everyone here: the run has no files (a done run's files are aggregate metrics,
# never per-item labels, and are readable by every signed-in user like the report).


def _matrix() -> dict[str, tuple[str, dict[str, str]]]:
    rows = {}
    for line in MATRIX_TABLE.strip().splitlines():
        name, method, *cells = line.split()
        assert len(cells) == len(ROLES), line
        rows[name] = (method, dict(zip(ROLES, cells)))
    return rows


MATRIX = _matrix()


def matrix_row(name: str) -> tuple[str, dict[str, str]] | None:
    if name in MATRIX:
        return MATRIX[name]
    namespace, _, rest = name.partition(":")
    alias = ALIASES.get(namespace)
    return MATRIX.get(f"{alias}:{rest}") if alias else None
QUERY = {"annotation:manage_template_preview": "?relation={relation}"}  # query parameters a page needs
FILE_URLS = ("evaluation:download", "api_v1:evaluation_file")  # their ``name`` is a file name


def url_patterns(resolver=None, prefix: str = "", namespace: str | None = None):
    """(route, full name, parameter names) of every named pattern, admin site apart."""
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route.startswith("admin/"):
                continue
            ns = pattern.namespace or namespace
            yield from url_patterns(pattern, route, ns)
        elif isinstance(pattern, URLPattern) and pattern.name:
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
            yield route, name, list(pattern.pattern.converters)


def admin_routes():
    admin = next(p for p in get_resolver().url_patterns if str(p.pattern).startswith("admin/"))
    for pattern in admin.url_patterns:
        yield "admin/" + str(pattern.pattern)


def fill(route: str, name: str, values: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        param = match.group(2)
        if name in FILE_URLS and param == "name":
            return "summary.json"
        return str(values[param])

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


class Forms(HTMLParser):
    """POST forms of a page and whether each carries a CSRF token."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._open = {"method": (attrs.get("method") or "get").lower(), "action": attrs.get("action"), "csrf": False}
            self.forms.append(self._open)
        elif tag == "input" and self._open is not None and attrs.get("name") == "csrfmiddlewaretoken" and attrs.get("value"):
            self._open["csrf"] = True

    def handle_endtag(self, tag):
        if tag == "form":
            self._open = None


def post_forms_without_csrf(html: str) -> list[dict]:
    parser = Forms()
    parser.feed(html)
    return [f for f in parser.forms if f["method"] == "post" and not f["csrf"]]


@pytest.fixture
def world(tmp_path):
    """A campaign, one user per role, an owner annotator holding an open hand-out, and an evaluation run."""
    from evaluation.models import EvaluationRun

    campaign = nationality_campaign(tmp_path)
    users = {
        "annotator": member(campaign, "annotator", Role.ANNOTATOR),  # usernames: api_v1:member takes "expert"
        "adjudicator": member(campaign, "adjudicator", Role.ADJUDICATOR),
        "expert": member(campaign, "expert", Role.EXPERT),
        "admin": member(campaign, "campaign-admin", Role.ADMIN),
        "staff": member(campaign, "staff", staff=True),
    }
    owner = member(campaign, "owner", Role.ANNOTATOR)
    hand_out = next_item(campaign, owner)
    run = EvaluationRun.objects.create(sample=campaign.pool.sample, campaign=campaign)
    kg = campaign.pool.sample.kg
    relation = Relation.objects.filter(kg=kg).order_by("index").first()
    system = System.objects.create(kg=kg, name="sys", origin=System.Origin.IMPORTED, status=System.Status.READY)
    upload = Upload.objects.create(kind=Upload.Kind.KG, name="up", folder="uploads/none", created_by=users["staff"])
    values = {"relation": relation.pk, "name": campaign.name, "hand_out": hand_out.pk, "item_id": hand_out.item_id, "run_id": run.pk,
              "fmt": "labels", "position": 1, "kg": kg.name, "system": system.name, "sample": campaign.pool.sample.name,
              "pool_id": campaign.pool_id, "upload_id": upload.pk, "username": "expert", "role": "admin"}
    return {"campaign": campaign, "users": users, "owner": owner, "hand_out": hand_out, "values": values}


def client_for(world, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


def request(client: Client, method: str, url: str):
    if method == "GET":
        return client.get(url)
    if method in ("DELETE", "PATCH"):
        return client.generic(method, url, "{}", content_type="application/json")
    return client.post(url, {}, content_type="application/json") if url.startswith("/api/") else client.post(url, {})


def check(cell: str, response, url: str, role: str, method: str) -> None:
    code = response.status_code
    where = f"{method} {url} as {role}: {code}"
    login_redirect = code == 302 and re.search(r"/(admin/)?login/", response.get("Location", "") or "")
    assert code < 500, where
    if cell == "ok":
        assert code == 200 or (code == 302 and not login_redirect), where
    elif cell == "open":
        assert code in (200, 400, 409) or (code == 302 and not login_redirect), where
    elif cell == "deny":
        assert code in (403, 404), where
    elif cell == "login":
        assert login_redirect, where
    elif cell == "401":
        assert code == 401, where
    elif cell == "405":
        assert code == 405, where
    else:
        raise AssertionError(f"unknown cell {cell!r}")


def test_every_url_pattern_is_in_the_matrix():
    names = {name for _route, name, _params in url_patterns()}
    missing = sorted(name for name in names if matrix_row(name) is None)
    assert not missing, f"URL patterns without a row in the permissions matrix: {missing}"


def test_permissions_matrix(world):
    unfilled = []
    checked = 0
    for route, name, params in url_patterns():
        if matrix_row(name) is None:
            continue  # reported by test_every_url_pattern_is_in_the_matrix
        if any(p not in world["values"] for p in params if not (name in FILE_URLS and p == "name")):
            unfilled.append(name)
            continue
        url = fill(route, name, world["values"]) + QUERY.get(name, "").format(**world["values"])
        method, cells = matrix_row(name)
        for role in ROLES:
            client = client_for(world, role)
            response = request(client, method, url)
            check(cells[role], response, url, role, method)
            checked += 1
            if response.status_code == 200 and "text/html" in response.get("Content-Type", ""):
                bad = post_forms_without_csrf(response.content.decode())
                assert not bad, f"POST form(s) without a CSRF token on {url} as {role}: {bad}"
    assert not unfilled, f"no value for the path parameters of {unfilled}"
    assert checked >= 6 * 30
    # the owner still holds the hand-out: nobody else's request changed it
    hand_out = Assignment.objects.get(pk=world["hand_out"].pk)
    assert hand_out.state == Assignment.State.OPEN and not hand_out.item.judgments.exists()


def test_admin_site_is_for_staff_only(world):
    for role in ROLES:
        client = client_for(world, role)
        response = client.get("/admin/")
        if role == "staff":
            assert response.status_code == 200
        else:
            assert response.status_code == 302 and "/admin/login/" in response["Location"], role
    routes = list(admin_routes())
    assert len(routes) > 10  # the model pages of every app are there
    annotator = client_for(world, "annotator")
    for model_url in ("/admin/annotation/judgment/", "/admin/annotation/item/", "/admin/auth/user/",
                      "/admin/authtoken/tokenproxy/"):
        response = annotator.get(model_url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], model_url


def test_blind_judging_cannot_be_broken_by_guessing_ids(world):
    """An annotator asking for any id but their own hand-out gets 403/404 on every URL with an id in it."""
    campaign, owner_hand_out = world["campaign"], world["hand_out"]
    annotator = world["users"]["annotator"]
    mine = next_item(campaign, annotator)
    assert mine is not None and mine.pk != owner_hand_out.pk  # (possibly the same item: double annotation)
    ids = set(Item.objects.filter(campaign=campaign).values_list("pk", flat=True))
    ids |= set(Assignment.objects.values_list("pk", flat=True))
    ids |= {0, 999_999}
    ids -= {mine.pk, mine.item_id}
    assert owner_hand_out.pk in ids
    client = client_for(world, "annotator")
    body = {"answer": "Y", "source_url": "https://en.wikipedia.org/wiki/Guess", "quote": "", "request_id": "",
            "label": "Y", "reason": "guess"}
    for route, name, params in url_patterns():
        id_params = [p for p in params if p in ("hand_out", "item_id")]
        if not id_params:
            continue
        for guess in sorted(ids):
            url = fill(route, name, {**world["values"], "hand_out": guess, "item_id": guess})
            for method in ("GET", "POST"):
                if method == "GET":
                    response = client.get(url)
                elif url.startswith("/api/"):
                    response = client.post(url, body, content_type="application/json")
                else:
                    response = client.post(url, body)
                assert response.status_code in (403, 404, 405), f"{method} {url}: {response.status_code}"
    # exports and evaluation files are for managers: the annotator gets nothing item-level there either
    for fmt in ("labels", "jsonl", "csv", "qrels", "positives", "questions"):
        assert client.get(f"/campaigns/{campaign.name}/manage/export/{fmt}/").status_code == 403
    assert client.get(f"/evaluation/{world['values']['run_id']}/files/summary.json").status_code == 404
    # nothing was recorded by the guesses, and the owner's hand-out is untouched
    assert not Item.objects.filter(campaign=campaign, judgments__isnull=False).exists()
    assert Assignment.objects.get(pk=owner_hand_out.pk).state == Assignment.State.OPEN


def test_every_post_form_in_the_templates_has_a_csrf_token():
    folders = [Path(settings.BASE_DIR) / "templates"] + [
        Path(settings.BASE_DIR) / app / "templates" for app in ("annotation", "evaluation", "pooling")]
    missing = []
    checked = 0
    for folder in folders:
        for path in folder.rglob("*.html"):
            text = path.read_text(encoding="utf-8")
            for match in re.finditer(r"<form\b[^>]*>", text, flags=re.I):
                if not re.search(r"method\s*=\s*[\"']?post", match.group(0), flags=re.I):
                    continue
                checked += 1
                end = text.find("</form>", match.end())
                if "{% csrf_token %}" not in text[match.end(): end if end >= 0 else None]:
                    missing.append(f"{path.relative_to(settings.BASE_DIR)}:{text.count(chr(10), 0, match.start()) + 1}")
    assert checked >= 10
    assert not missing, f"POST forms without {{% csrf_token %}}: {missing}"
