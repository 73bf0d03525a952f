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


def env_vapid() -> tuple[str, str, str]:
    """The Web Push keys (SPRAVKA_VAPID_PUBLIC_KEY, SPRAVKA_VAPID_PRIVATE_KEY: base64url, as
    `manage.py vapid_keys` prints them) and their contact (SPRAVKA_VAPID_SUBJECT: mailto: or https:).
    All three empty: push is off. One without the others, or a key of the wrong size, stops the start."""
    import base64
    import binascii

    names = ("SPRAVKA_VAPID_PUBLIC_KEY", "SPRAVKA_VAPID_PRIVATE_KEY", "SPRAVKA_VAPID_SUBJECT")
    public, private, subject = (os.environ.get(name, "").strip() for name in names)
    if not (public or private):
        return "", "", ""
    missing = [name for name, value in zip(names, (public, private, subject), strict=True) if not value]
    if missing:
        raise EnvError(f"Web Push needs all of {', '.join(names)}; missing {', '.join(missing)}")
    for name, value, size in ((names[0], public, 65), (names[1], private, 32)):
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise EnvError(f"{name} must be a base64url P-256 key of {size} bytes (manage.py vapid_keys prints one)")
    if not subject.startswith(("mailto:", "https://")):
        raise EnvError(f"SPRAVKA_VAPID_SUBJECT must start with mailto: or https://; got {subject!r}")
    return public, private, subject
