"""Every response carries a strict Content-Security-Policy (issue #13, item 9): only kgpool's own scripts and
styles, nothing inline. So that the policy breaks no page, no template and no rendered page holds an inline
script, style element, style attribute, event handler or javascript: URL (the browser side, console included,
is tests/test_security_content_security_policy_browser.py)."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import Client

from tests.test_security_permissions_matrix import (  # noqa: F401 - world is a fixture
    MATRIX,
    QUERY,
    ROLES,
    client_for,
    fill,
    request,
    url_patterns,
    world,
)

pytestmark = pytest.mark.django_db

# written out, not read from the settings: the test pins what "strict" means
REQUIRED = ("default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "base-uri 'self'",
            "form-action 'self'", "frame-ancestors 'none'")
TEMPLATE_FOLDERS = [Path(settings.BASE_DIR) / "templates"] + [
    Path(settings.BASE_DIR) / app / "templates" for app in ("annotation", "evaluation", "pooling", "kgpool")]
DATA_SCRIPT_TYPES = ("application/json", "application/ld+json")


def directives(response) -> set[str]:
    header = response.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    return {" ".join(part.split()) for part in header.split(";") if part.strip()}


class InlineCode(HTMLParser):
    """What a strict policy blocks in a page: inline scripts, style elements and attributes, event handlers,
    javascript: URLs."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and not attrs.get("src") and (attrs.get("type") or "").lower() not in DATA_SCRIPT_TYPES:
            self.found.append("inline <script>")
        if tag == "style":
            self.found.append("<style> element")
        for name, value in attrs.items():
            if name == "style":
                self.found.append(f"style attribute on <{tag}>")
            elif name.startswith("on"):
                self.found.append(f"{name} handler on <{tag}>")
            elif name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"javascript: URL on <{tag}>")


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    return parser.found


def test_the_parser_finds_every_kind_of_inline_code():
    html = ('<script>x()</script><script src="/s.js"></script><script type="application/json">{}</script>'
            '<style>p{}</style><p style="color:red" onclick="x()"><a href="javascript:x()">x</a>')
    assert inline_code(html) == ["inline <script>", "<style> element", "style attribute on <p>",
                                 "onclick handler on <p>", "javascript: URL on <a>"]


def test_no_template_has_inline_code():
    found = []
    checked = 0
    for folder in TEMPLATE_FOLDERS:
        for path in folder.rglob("*.html"):
            checked += 1
            text = path.read_text(encoding="utf-8")
            where = path.relative_to(settings.BASE_DIR)
            for pattern, what in ((r"<script\b(?![^>]*\bsrc\s*=)[^>]*>", "inline <script>"), (r"<style\b", "<style>"),
                                  (r"\sstyle\s*=", "style attribute"), (r"\son[a-z]+\s*=", "event handler"),
                                  (r"javascript:", "javascript: URL")):
                for match in re.finditer(pattern, text, flags=re.I):
                    found.append(f"{where}:{text.count(chr(10), 0, match.start()) + 1}: {what}")
    assert checked >= 25
    assert not found, "inline code the Content-Security-Policy blocks:\n" + "\n".join(found)


def test_every_page_for_every_role_has_the_policy_and_no_inline_code(world):  # noqa: F811
    pages = 0
    for route, name, _params in url_patterns():
        if name not in MATRIX:
            continue  # test_every_url_pattern_is_in_the_matrix reports it
        url = fill(route, name, world["values"]) + QUERY.get(name, "").format(**world["values"])
        method, _cells = MATRIX[name]
        for role in ROLES:
            response = request(client_for(world, role), method, url)
            assert set(REQUIRED) <= directives(response), (url, role)
            if response.status_code == 200 and "text/html" in response.get("Content-Type", ""):
                pages += 1
                found = inline_code(response.content.decode())
                assert not found, f"{url} as {role}: {found}"
    assert pages >= 40
    staff = client_for(world, "staff")
    for url in ("/admin/", "/admin/pooling/system/", "/login/", "/static/kgpool/site.css", "/no-such-page/"):
        assert set(REQUIRED) <= directives(staff.get(url)), url


def test_api_docs_load_their_init_script_from_a_separate_request():
    client = Client()
    page = client.get("/api/docs/")
    assert page.status_code == 200 and set(REQUIRED) <= directives(page)
    assert not inline_code(page.content.decode())
    script = re.search(r'<script src="(/api/docs/\?[^"]*script[^"]*)"', page.content.decode())
    assert script, page.content.decode()
    init = client.get(script.group(1).replace("&amp;", "&"))
    assert init.status_code == 200 and init["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in init.content.decode()


def test_the_policy_can_be_replaced_or_turned_off(settings):
    from kgpool.middleware import ContentSecurityPolicyMiddleware

    for policy, expected in (("default-src 'none'", "default-src 'none'"), ("", None)):
        settings.KGPOOL_CONTENT_SECURITY_POLICY = policy
        middleware = ContentSecurityPolicyMiddleware(lambda request: HttpResponse())
        assert middleware(None).get("Content-Security-Policy") == expected
