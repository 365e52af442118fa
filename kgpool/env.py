"""Typed readers for settings that come from the environment (healthchecks style)."""
from __future__ import annotations

import os

#: SECRET_KEY when none is set: for the embedded default on localhost only (public: it is in the source).
#: ``check --deploy`` fails while it is in use (kgpool.checks).
DEVELOPMENT_SECRET_KEY = "kgpool-insecure-local-development-key-change-me-0123456789abcdef"


class ImproperlyConfiguredEnv(ValueError):
    """An environment variable is set to a value that cannot be used."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfiguredEnv(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]
