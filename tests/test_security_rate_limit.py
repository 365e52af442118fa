"""Login rate limiting (django-axes on the login page and the admin) and API token guessing (429 per address)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kgpool.security import client_ip

pytestmark = pytest.mark.django_db

PASSWORD = "right-password-123"


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


def login(client: Client, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


@override_settings(AXES_FAILURE_LIMIT=3)
def test_failed_logins_lock_out_the_username_from_that_address_only():
    get_user_model().objects.create_user("alice", password=PASSWORD)
    client = Client()
    for _ in range(2):
        response = login(client, "alice", "wrong")
        assert response.status_code == 200 and not response.wsgi_request.user.is_authenticated
    assert login(client, "alice", "wrong").status_code == 429  # the third failure locks the pair out
    locked = login(client, "alice", PASSWORD)  # now even the right password is refused
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    assert b"too many" in locked.content.lower() or b"locked" in locked.content.lower()
    # another address, same user: not locked (per username + address)
    other = Client()
    assert login(other, "alice", PASSWORD, ip="10.0.0.2").status_code == 302
    # another user from the first address: not locked
    get_user_model().objects.create_user("bob", password=PASSWORD)
    assert login(Client(), "bob", PASSWORD).status_code == 302


@override_settings(AXES_FAILURE_LIMIT=3)
def test_a_success_before_the_limit_resets_the_count():
    get_user_model().objects.create_user("carol", password=PASSWORD)
    client = Client()
    login(client, "carol", "wrong")
    login(client, "carol", "wrong")
    assert login(client, "carol", PASSWORD).status_code == 302
    client.logout()
    login(client, "carol", "wrong")
    login(client, "carol", "wrong")
    assert login(client, "carol", PASSWORD).status_code == 302


@override_settings(AXES_FAILURE_LIMIT=2)
def test_the_admin_login_is_limited_too():
    get_user_model().objects.create_user("dave", password=PASSWORD, is_staff=True)
    client = Client()
    url = "/admin/login/?next=/admin/"
    for _ in range(2):
        client.post(url, {"username": "dave", "password": "nope"}, REMOTE_ADDR="10.0.0.9")
    assert client.post(url, {"username": "dave", "password": PASSWORD}, REMOTE_ADDR="10.0.0.9").status_code == 429


@override_settings(KGPOOL_TOKEN_FAILURE_LIMIT=4, KGPOOL_TOKEN_FAILURE_WINDOW_S=60)
def test_api_token_guessing_is_answered_429_per_address():
    user = get_user_model().objects.create_user("erin", password=PASSWORD)
    token = Token.objects.create(user=user).key
    api = APIClient()
    good = {"HTTP_AUTHORIZATION": f"Token {token}", "REMOTE_ADDR": "10.1.1.1"}
    assert api.get("/api/campaigns/", **good).status_code == 200
    for n in range(4):
        response = api.get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token guess{n:036d}", REMOTE_ADDR="10.1.1.1")
        assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Token"
    blocked = api.get("/api/campaigns/", HTTP_AUTHORIZATION="Token another-guess", REMOTE_ADDR="10.1.1.1")
    assert blocked.status_code == 429 and "Retry-After" in blocked.headers
    # another address is not affected
    assert api.get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token}", REMOTE_ADDR="10.1.1.2").status_code == 200
    # requests without a token are not counted (session users, anonymous 401)
    assert api.get("/api/campaigns/", REMOTE_ADDR="10.1.1.3").status_code == 401


@override_settings(KGPOOL_PROXY_COUNT=1)
def test_client_ip_behind_one_trusted_proxy_takes_the_address_it_added():
    class R:
        META = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 203.0.113.7"}

    assert client_ip(R) == "203.0.113.7"  # the left entry is whatever the client claimed


def test_client_ip_without_proxy_is_remote_addr():
    class R:
        META = {"REMOTE_ADDR": "198.51.100.4", "HTTP_X_FORWARDED_FOR": "6.6.6.6"}

    assert client_ip(R) == "198.51.100.4"
