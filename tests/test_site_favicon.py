"""The site has a favicon (issue 15: /favicon.ico was a 404 on every page): named in the head of every page
of the site's layout, and /favicon.ico (asked for by pages that name none, e.g. the admin) leads to it."""
from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_favicon_is_linked_and_served():
    client = Client()
    login = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/kgpool/favicon.svg" type="image/svg+xml">' in login
    redirect = client.get("/favicon.ico")
    assert redirect.status_code == 301 and redirect["Location"] == "/static/kgpool/favicon.svg"
    icon = client.get("/static/kgpool/favicon.svg")
    assert icon.status_code == 200
    body = b"".join(icon.streaming_content) if icon.streaming else icon.content
    assert body.startswith(b"<svg") and len(body) < 2000
