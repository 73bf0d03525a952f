"""Request rates per API key, counted in Redis (Django's cache), so that every ASGI process shares
one count. `ask` has a rate of its own: each call runs the whole answer chain."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from assistant.bots.models import ApiKey

CACHE_PREFIX = "api:throttle"


class ApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api"
    setting = "API_RATE"

    def get_rate(self) -> str:
        """Read at each request (not frozen at import as DRF's table is): settings.API_RATE, API_ASK_RATE."""
        from django.conf import settings

        return str(getattr(settings, self.setting))

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        key = request.auth
        if not isinstance(key, ApiKey):
            return None  # refused before this by the permission; nothing to count
        return f"{CACHE_PREFIX}:{self.scope}:{key.prefix}"


class AskRateThrottle(ApiKeyRateThrottle):
    scope = "api_ask"
    setting = "API_ASK_RATE"
