"""Who may open the widget socket, and from where: the Origin check and the client address.

Origin is what a browser says about the page that opened the socket. It does not stop a script
(which can send any Origin), but it does stop other websites from embedding a bot's widget and
spending its owner's model budget; rate limits handle scripts."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from django.conf import settings

from bots.origins import normalize_origin

__all__ = ["normalize_origin"]  # re-exported: the socket's checks and their tests use it from here

def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """Exact match of scheme, host and port against the bot's allowed origins; no Origin, no entry."""
    if not origin:
        return False
    wanted = normalize_origin(origin)
    return wanted is not None and any(normalize_origin(item) == wanted for item in allowed if isinstance(item, str))


def header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def client_ip(scope: dict[str, Any]) -> str | None:
    """The visitor's address. Behind CHAT_PROXY_HOPS trusted proxies, the address the outermost
    trusted proxy saw, read from the right of X-Forwarded-For (the left part is client-supplied
    and can say anything); with 0 hops (the default) the header is ignored."""
    hops = settings.CHAT_PROXY_HOPS
    if hops > 0:
        forwarded = [part for part in (header(scope, b"x-forwarded-for") or "").split(",") if part.strip()]
        if len(forwarded) >= hops:
            ip = _valid_ip(forwarded[-hops])
            if ip:
                return ip
    client = scope.get("client")
    return _valid_ip(client[0]) if client else None


def own_origin(scope: dict[str, Any]) -> str | None:
    """This server's origin as the socket's request addressed it (`Host`, ws → http, wss → https)."""
    host = header(scope, b"host")
    if not host:
        return None
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    return normalize_origin(f"{scheme}://{host}")


def is_own_origin(origin: str | None, scope: dict[str, Any]) -> bool:
    """The page that opened the socket is served by this server itself (or its public address)."""
    wanted = normalize_origin(origin) if origin else None
    if wanted is None:
        return False
    return wanted in {own_origin(scope), normalize_origin(settings.SPRAVKA_PUBLIC_URL)}


def session_member(scope: dict[str, Any], bot_id: int) -> bool:
    """Whether the browser's signed-in session (Django's session cookie) belongs to a member of
    the bot. Read only for sockets opened from this server's own pages."""
    from django.contrib.auth import get_user

    from bots.selectors import bots_for_user

    cookies = header(scope, b"cookie") or ""
    key = next(
        (value for name, _, value in (part.strip().partition("=") for part in cookies.split(";"))
         if name == settings.SESSION_COOKIE_NAME),
        "",
    )
    if not key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    # Django's own check, the session hash included: a changed password signs old sessions out.
    user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
    return bool(user.is_authenticated) and bots_for_user(user).filter(pk=bot_id).exists()
