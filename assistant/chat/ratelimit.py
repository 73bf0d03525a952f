"""Message rate limits for the widget, counted in Redis so that every ASGI process shares them.

A fixed window per (scope, identity): INCR + EXPIRE in one round trip. A burst across a window
boundary may pass up to twice the limit; that is fine for keeping a script from flooding the chain,
which is what this is for. Keys carry the cache KEY_PREFIX, so parallel test runs never collide.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from redis import asyncio as aioredis

# One client (and pool) per event loop: uvicorn runs one loop per process; tests run one per test.
_clients: dict[int, tuple[asyncio.AbstractEventLoop, aioredis.Redis]] = {}


@dataclass(frozen=True)
class Limit:
    scope: str  # "visitor", "ip", "lead-visitor", "lead-ip"
    identity: str
    limit: int
    window: int  # seconds

    def key(self, now: float) -> str:
        prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
        return f"{prefix}:chat:rate:{self.scope}:{self.identity}:{int(now // self.window)}"


def message_limits(*, bot_id: int, visitor_id: str, ip: str | None) -> list[Limit]:
    """The limits one visitor message counts against, from settings (CHAT_RATE_*)."""
    window = settings.CHAT_RATE_WINDOW
    limits = [Limit("visitor", f"{bot_id}:{visitor_id}", settings.CHAT_RATE_VISITOR, window)]
    if ip:
        limits.append(Limit("ip", ip, settings.CHAT_RATE_IP, window))
    return [limit for limit in limits if limit.limit > 0]


def lead_limits(*, bot_id: int, visitor_id: str, ip: str | None) -> list[Limit]:
    """The limits one contact form counts against (CHAT_RATE_LEADS_*): a form is a write a script
    could repeat to flood an owner's leads."""
    window = settings.CHAT_RATE_WINDOW
    limits = [Limit("lead-visitor", f"{bot_id}:{visitor_id}", settings.CHAT_RATE_LEADS_VISITOR, window)]
    if ip:
        limits.append(Limit("lead-ip", ip, settings.CHAT_RATE_LEADS_IP, window))
    return [limit for limit in limits if limit.limit > 0]


def _client() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    for key, entry in list(_clients.items()):
        if entry[0].is_closed():
            del _clients[key]
    known = _clients.get(id(loop))
    if known is not None and known[0] is loop:
        return known[1]
    # A burst (thousands of sockets sending at once) waits for one of a bounded set of connections,
    # like the channel layer's, instead of failing past redis-py's default 100 in flight.
    pool = aioredis.BlockingConnectionPool.from_url(
        settings.REDIS_URL, max_connections=settings.CHANNELS_POOL_SIZE, timeout=settings.CHANNELS_POOL_TIMEOUT
    )
    client = aioredis.Redis(connection_pool=pool)
    _clients[id(loop)] = (loop, client)
    return client


async def hit(limits: list[Limit]) -> int | None:
    """Count one event against every limit. Returns None when all allow it, otherwise the seconds
    until the most restrictive window that was exceeded resets."""
    if not limits:
        return None
    now = time.time()
    pipe: Any = _client().pipeline(transaction=False)
    for limit in limits:
        key = limit.key(now)
        pipe.incr(key)
        pipe.expire(key, limit.window + 1)
    results = await pipe.execute()
    waits = [
        math.ceil(limit.window - (now % limit.window))
        for limit, count in zip(limits, results[0::2], strict=True)
        if int(count) > limit.limit
    ]
    return max(waits) if waits else None
