"""The login lockout answer (429) is a page of the site with a way back (issue 15: it was bare text)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


@override_settings(AXES_FAILURE_LIMIT=2)
def test_the_lockout_page_explains_and_links_back():
    cache.clear()
    get_user_model().objects.create_user("alice", password="right-password-123")
    client = Client()
    for _ in range(2):
        locked = client.post("/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
    assert locked.status_code == 429
    body = locked.content.decode()
    assert "<h1>Too many failed log-ins</h1>" in body and "<header>" in body  # the site's layout
    assert 'href="/login/"' in body and "0:15:00" in body
    cache.clear()
