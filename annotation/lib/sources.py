"""Source URL validation and normalisation (Django-free)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

# A web scheme inside a URL, also percent-encoded ("https%3A%2F%2F"): a pasted URL appended to a prefilled one.
_SCHEME_INSIDE = re.compile(r"https?(?::|%3a)(?:/|%2f)", re.IGNORECASE)
_SCHEME_START = re.compile(r"https?://", re.IGNORECASE)


class SourceError(ValueError):
    """The source URL is not acceptable; the message says why."""


@dataclass(frozen=True)
class Source:
    url: str  # normalised
    domain: str  # the allow-listed domain it matched


def normalise_domain(domain: str) -> str:
    domain = domain.strip().lower().rstrip(".")
    if domain.startswith("*."):
        domain = domain[2:]
    return domain


def normalised_domains(domains) -> list[str]:
    """``domains`` normalised, without blanks or repeats, in their order."""
    return list(dict.fromkeys(d for d in (normalise_domain(str(x)) for x in domains) if d))


def domains_refusal(domains) -> str | None:
    """Why a list of verified source domains cannot be a campaign's, or None: none left once normalised (nobody
    could give an acceptable source, so nobody could judge), or one that is no bare domain name."""
    cleaned = normalised_domains(domains)
    if not cleaned:
        return ("give at least one verified source domain (e.g. wikipedia.org): without one nobody can give an "
                "acceptable source, so nobody can judge")
    if any("/" in d or " " in d for d in cleaned):
        return "give bare domain names such as wikipedia.org"
    return None


def has_doubled_scheme(url: str) -> bool:
    """Whether ``url`` holds a second http(s) scheme after its own, as in
    ``https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/Steroid``."""
    own = _SCHEME_START.match(url or "")
    return own is not None and _SCHEME_INSIDE.search(url, own.end()) is not None


def undouble(url: str) -> str | None:
    """The URL a doubled one was meant to be: from its last literal ``http(s)://`` on (the pasted URL);
    None when ``url`` is not doubled or its inner URL is only percent-encoded."""
    if not has_doubled_scheme(url):
        return None
    starts = [m.start() for m in _SCHEME_START.finditer(url) if m.start() > 0]
    return url[starts[-1]:] if starts else None


def check_source(url: str, allowed_domains: list[str] | tuple[str, ...]) -> Source:
    """Validate ``url`` against the allow-list and normalise it.

    http/https only; the host must be an allowed domain or one of its subdomains (``en.wikipedia.org`` matches
    ``wikipedia.org``; ``notwikipedia.org`` does not). Normalised: scheme and host lower-case, default port and
    fragment dropped, empty path -> ``/``; path and query are kept as given.
    """
    url = (url or "").strip()
    if not url:
        raise SourceError("a source URL is required")
    if any(ch.isspace() for ch in url):
        raise SourceError("the source URL must not contain spaces")
    if has_doubled_scheme(url):
        raise SourceError("the source URL contains a second http(s):// (was a URL pasted after another?): "
                          "give one URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SourceError(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SourceError(f"only http and https links are accepted, not {scheme or 'a link without scheme'!r}")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise SourceError("the source URL has no host")
    if parts.username or parts.password:
        raise SourceError("the source URL must not contain a user name or password")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise SourceError(f"invalid host name {host!r}") from None
    allowed = [normalise_domain(d) for d in allowed_domains if d and d.strip()]
    matched = next((d for d in allowed if host == d or host.endswith("." + d)), None)
    if matched is None:
        listed = ", ".join(allowed) or "none configured"
        raise SourceError(f"{host} is not a verified source of this campaign (allowed: {listed})")
    netloc = host
    if port is not None and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        netloc = f"{host}:{port}"
    return Source(urlunsplit((scheme, netloc, parts.path or "/", parts.query, "")), matched)
