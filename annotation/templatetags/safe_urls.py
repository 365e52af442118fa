"""Template filters for links built from stored data (entity URLs from imported files, source URLs)."""
from __future__ import annotations

from urllib.parse import urlsplit

from django import template

register = template.Library()


@register.filter
def http_url(value) -> str:
    """``value`` when it is an absolute http(s) URL, else '' (a ``javascript:`` or ``data:`` URL, or anything
    else, is never rendered as a link). Autoescaping still applies to what is returned."""
    url = str(value or "").strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return ""
    return url
