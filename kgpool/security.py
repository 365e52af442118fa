"""Request-level security helpers: the client address, and rate limiting of API token guessing.

Password logins (the login page, the admin) are limited by django-axes (settings: AXES_*, README "Security").
API tokens never pass through ``authenticate()``, so axes does not see them: ``RateLimitedTokenAuthentication``
counts failed token authentications per client address in the cache; past the limit, every further invalid
token from that address is answered 429 until the window is over. A valid token is still checked first and
works: the lock stops guessing, not the people who share the guesser's address (same NAT, same proxy).
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connections, router
from django.utils.translation import gettext_lazy as _
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled

from kgpool.rawrows import columns, from_row

TOKEN_FAILURE_KEY = "kgpool:token-failures:{ip}"


def client_ip(request) -> str | None:
    """The client's address: REMOTE_ADDR, or behind ``KGPOOL_PROXY_COUNT`` trusted reverse proxies the address the
    outermost of them put in X-Forwarded-For (entries further left are the client's word and not trusted)."""
    meta = getattr(request, "META", {})
    proxies = getattr(settings, "KGPOOL_PROXY_COUNT", 0)
    if proxies > 0:
        forwarded = [part.strip() for part in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return meta.get("REMOTE_ADDR") or None  # None: unknown (axes stores it in an IP address column)


def record_token_failure(ip: str) -> int:
    key = TOKEN_FAILURE_KEY.format(ip=ip)
    window = settings.KGPOOL_TOKEN_FAILURE_WINDOW_S
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window)
        return 1


@dataclass(frozen=True)
class OfferedToken:
    """An API token a request offers, not checked yet: the judging API's hot statements check it themselves, in
    their first statement, instead of a lookup of its own (issue 21; ``token_user_sql``)."""

    key: str


def offered_token(request) -> OfferedToken | None:
    """The token in a request's ``Authorization: Token <key>`` header, parsed as DRF's TokenAuthentication does;
    None without one, or with a session cookie (such requests take DRF's path, which checks the token first)."""
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        return None
    parts = get_authorization_header(request).split()
    if len(parts) != 2 or parts[0].lower() != TokenAuthentication.keyword.lower().encode():
        return None
    try:
        return OfferedToken(parts[1].decode())
    except UnicodeError:
        return None


def token_user_sql(user_column: str) -> tuple[str, str]:
    """(columns, joins) checking an offered token inside another statement: the joins keep the row only when
    the token whose key is the joins' one parameter belongs to ``user_column``'s user and that user is active
    (what DRF's check asks); the columns are the token's and the user's (``token_user_from_row``)."""
    from rest_framework.authtoken.models import Token  # a model: not importable before the apps are ready

    user_model = get_user_model()
    joins = (f"JOIN {Token._meta.db_table} tk ON tk.user_id = {user_column} AND tk.key = %s "
             f"JOIN {user_model._meta.db_table} tu ON tu.{user_model._meta.pk.column} = tk.user_id AND tu.is_active")
    return f"{columns(Token, 'tk')}, {columns(user_model, 'tu')}", joins


def token_user_id_sql() -> str:
    """A sub-select of the user id of the token whose key is its one parameter (none: NULL), for a statement
    that must look its rows up by that user rather than join every candidate to the token."""
    from rest_framework.authtoken.models import Token

    return f"SELECT ot.user_id FROM {Token._meta.db_table} ot WHERE ot.key = %s"


def token_user_from_row(connection, values: tuple) -> tuple[object, object, tuple]:
    """(user, token, the rest of ``values``) from a row whose first columns are ``token_user_sql``'s."""
    from rest_framework.authtoken.models import Token

    user_model = get_user_model()
    width, user_width = len(Token._meta.concrete_fields), len(user_model._meta.concrete_fields)
    token = from_row(connection, Token, values[:width])
    user = from_row(connection, user_model, values[width:width + user_width])
    token.user = user
    return user, token, values[width + user_width:]


class RateLimitedTokenAuthentication(TokenAuthentication):
    """DRF token authentication that refuses (429) an address after too many invalid tokens in a window."""

    def authenticate_credentials(self, key):
        """DRF's check (an existing token of an active user), on PostgreSQL in one plain statement: the ORM's
        building and compiling cost more CPU than the lookup on every API request (issue 21)."""
        from rest_framework.authtoken.models import Token  # a model: not importable before the apps are ready

        connection = connections[router.db_for_read(Token)]
        if connection.vendor != "postgresql" or settings.KGPOOL_JUDGING_PATH == "legacy":  # legacy: the bench's baseline
            return super().authenticate_credentials(key)
        user_model = get_user_model()
        sql = (f"SELECT {columns(Token, 't')}, {columns(user_model, 'u')} FROM {Token._meta.db_table} t "
               f"JOIN {user_model._meta.db_table} u ON u.{user_model._meta.pk.column} = t.user_id WHERE t.key = %s")
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise AuthenticationFailed(_("Invalid token."))
        user, token, _rest = token_user_from_row(connection, row)
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        return user, token

    def authenticate(self, request):
        if not settings.KGPOOL_TOKEN_FAILURE_LIMIT:
            return super().authenticate(request)
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header[:len(self.keyword) + 1].lower() == f"{self.keyword.lower()} ":
            return super().authenticate(request)  # no token offered: nothing to count
        ip = client_ip(request) or "unknown"
        try:
            return super().authenticate(request)  # a valid token works even while its address is locked
        except AuthenticationFailed:
            if record_token_failure(ip) > settings.KGPOOL_TOKEN_FAILURE_LIMIT:
                raise Throttled(wait=settings.KGPOOL_TOKEN_FAILURE_WINDOW_S,
                                detail="too many invalid API tokens from your address; try again later") from None
            raise
