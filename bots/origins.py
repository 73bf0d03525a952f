"""Web origins (`scheme://host[:port]`): what a bot's widget may be embedded on. The widget
socket compares a page's `Origin` with these (chat/access.py); the admin form and
`createbot` store them normalised."""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def normalize_origin(value: str) -> str | None:
    """`scheme://host[:port]` in lower case with the default port dropped; None if not an origin.
    Allowed origins stored with a trailing slash or a path ("https://shop.example/") still match."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"
