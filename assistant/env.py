"""Typed readers for settings taken from the environment; a bad value fails loudly at start-up."""

from __future__ import annotations

import os
import re

from django.core.exceptions import ImproperlyConfigured


class EnvError(ImproperlyConfigured):
    """A setting missing or malformed in the environment: `manage.py` prints it without a traceback."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(f"{name} must be one of 1/0, true/false, yes/no; got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be a whole number; got {raw!r}") from exc


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be a number; got {raw!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_required(*names: str, because: str) -> None:
    """Stop at start-up when any of `names` is unset or blank, naming every one that is missing."""
    missing = [name for name in names if not os.environ.get(name, "").strip()]
    if missing:
        raise EnvError(f"{because}, so {', '.join(missing)} must be set (see docs/deploy.md)")


def env_proxy_header(name: str) -> tuple[str, str] | None:
    """A request header name such as `X-Forwarded-Proto` as Django's SECURE_PROXY_SSL_HEADER pair."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not re.fullmatch(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*", raw):
        raise EnvError(f"{name} must be a header name such as X-Forwarded-Proto; got {raw!r}")
    return "HTTP_" + raw.upper().replace("-", "_"), "https"
