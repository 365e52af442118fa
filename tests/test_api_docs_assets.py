"""The API docs page (Swagger UI) loads its scripts and styles from our own static files, never from a CDN."""
from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders


@pytest.mark.django_db
def test_swagger_ui_assets_are_self_hosted(client) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+\.(?:js|css|png))["']""", html)
    assets += re.findall(r"""["']([^"'\s]+swagger-ui[^"'\s]*\.(?:js|css))["']""", html)
    assert assets, html[:500]
    for asset in assets:
        assert not re.match(r"^(https?:)?//", asset), f"third-party asset on the docs page: {asset}"
        assert asset.startswith(("/static/drf_spectacular_sidecar/", "/static/kgpool/")), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not among the static files"
        assert client.get(asset).status_code == 200, f"{asset} is not served"  # WhiteNoise, no collectstatic
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
