"""The API token-failure lock (API_TOKEN_FAILURE_LIMIT) stops guessing from an address, not the people behind it:
once tripped, every further invalid token from that address gets 429 (and is still counted), while a valid token
from the same address keeps working (issue #13, item 9)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

ADDRESS = "10.2.2.2"


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


@override_settings(KGPOOL_TOKEN_FAILURE_LIMIT=3, KGPOOL_TOKEN_FAILURE_WINDOW_S=60)
def test_a_valid_token_works_while_its_address_is_locked():
    user = get_user_model().objects.create_user("sam", password="right-password-123")
    token = Token.objects.create(user=user).key
    api = APIClient()

    def call(key: str):
        return api.get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=ADDRESS)

    assert [call(f"guess{n:036d}").status_code for n in range(3)] == [401] * 3
    assert call("guess-after-the-limit").status_code == 429  # the lock is tripped
    for _ in range(3):  # a colleague behind the same address (NAT, proxy) is not locked out
        assert call(token).status_code == 200
        assert call("still-guessing").status_code == 429  # while guessing stays refused
    assert call(token).json() == api.get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token}",
                                         REMOTE_ADDR="10.9.9.9").json()
