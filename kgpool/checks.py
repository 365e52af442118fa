"""kgpool's own system checks (``python manage.py check --deploy``)."""
from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

from kgpool.env import DEVELOPMENT_SECRET_KEY


@register(Tags.security, deploy=True)
def check_secret_key_is_not_the_built_in_one(app_configs=None, **kwargs) -> list[Error]:
    """Django's own check (security.W009) only looks at the key's length and variety, which the built-in key
    passes: anyone can read it in the source and forge sessions, password-reset links and signed values."""
    if settings.SECRET_KEY != DEVELOPMENT_SECRET_KEY:
        return []
    return [Error(
        "SECRET_KEY is kgpool's built-in development key, which is public.",
        hint="Set SECRET_KEY in the environment to a long random value (python -c 'import secrets; "
             "print(secrets.token_urlsafe(50))') and KGPOOL_REQUIRE_SECRET_KEY=true; see the README, Security.",
        id="kgpool.E001",
    )]
