"""Request rates per API key, counted in Redis so that every server process shares one count.

A fixed window per (scope, key): INCR + EXPIRE of every scope the view counts against, all in one
round trip (DRF's own SimpleRateThrottle reads and rewrites a list of timestamps through the cache:
two round trips per scope, ~10 ms a request on this machine). A burst across a window's end may
pass up to twice the rate, as with the widget's limits (core/ratelimit.py); that is fine
for what this is for: one integration must not swamp the server or the answer chain.

Scopes: "api" (settings.API_RATE) on every view; ask/ also counts against "api_ask"
(settings.API_ASK_RATE): each call runs the whole answer chain.
"""

from __future__ import annotations

import math
import time
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from bots.models import ApiKey
from core.ratelimit import key_prefix, sync_client

CACHE_PREFIX: Final = "api:throttle"
SETTINGS: Final = {"api": "API_RATE", "api_ask": "API_ASK_RATE"}
PERIODS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """"600/min" -> (600, 60): requests per window of seconds (DRF's notation: s, m, h, d)."""
    count, _sep, period = rate.partition("/")
    if not count.strip().isdigit() or not period.strip() or period.strip()[0] not in PERIODS:
        raise ImproperlyConfigured(f"an API rate looks like 600/min, got {rate!r}")
    return int(count), PERIODS[period.strip()[0]]


class ApiKeyRateThrottle(BaseThrottle):
    def __init__(self) -> None:
        self.retry_after: int | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return True  # refused before this by the permission; nothing to count
        scopes = getattr(view, "throttle_scopes", ("api",))
        limits = [(scope, *parse_rate(str(getattr(settings, SETTINGS[scope])))) for scope in scopes]
        now = time.time()
        pipe: Any = sync_client().pipeline(transaction=False)
        for scope, _count, window in limits:
            name = f"{key_prefix()}:{CACHE_PREFIX}:{scope}:{key.prefix}:{int(now // window)}"
            pipe.incr(name)
            pipe.expire(name, window + 1)
        counts = pipe.execute()[0::2]
        waits = [math.ceil(window - now % window) for (_scope, limit, window), seen in zip(limits, counts, strict=True)
                 if int(seen) > limit]
        self.retry_after = max(waits) if waits else None
        return self.retry_after is None

    def wait(self) -> float | None:
        return float(self.retry_after) if self.retry_after is not None else None
