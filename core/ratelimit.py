"""Limits on everything a widget socket can write, counted in Redis so that every ASGI process
shares them (docs/widget-protocol.md, "Limits and addresses").

- Writes (messages, new conversations, operator requests, ratings, contact forms) and order
  lookups (each one a request to the shop's system; enumerating orders is an attack): a fixed window
  per (kind, identity): INCR + EXPIRE in one round trip. A burst across a window boundary may pass
  up to twice the limit; that is fine for keeping a script from flooding the chain or an owner's
  inbox, which is what this is for.
- Open sockets per client address: a sorted set per address of the sockets open there, each
  scored with when it stops counting unless it is seen again (a widget pings every 25 s). A
  process that dies cannot leave its sockets counted for longer than SOCKET_TTL.

A Redis that cannot be reached (a restart, a failover) lets writes through instead of failing them:
the limits guard against floods, and a visitor's message must not be lost to a counter being away
for a few seconds. Each such pass is logged (a warning, no traceback). A Redis that comes back
empty starts every window from zero.

Keys carry the cache KEY_PREFIX, so parallel test runs never collide. The consumer counts
messages (its resend check is async); the services count the other writes where they decide to
make one, through `check` (sync, in the service's worker thread).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import redis
from django.conf import settings
from redis import asyncio as aioredis

logger = logging.getLogger("spravka.chat")

# A socket that has not been seen (hello, ping) for this long no longer counts (seconds).
SOCKET_TTL: Final = 120

# One client (and pool) per event loop: uvicorn runs one loop per process; tests run one per test.
_clients: dict[int, tuple[asyncio.AbstractEventLoop, aioredis.Redis]] = {}
_sync_client: redis.Redis | None = None
_sync_lock = threading.Lock()


@dataclass(frozen=True)
class Limit:
    scope: str  # e.g. "visitor", "ip", "lead-ip"
    identity: str
    limit: int
    window: int  # seconds

    def key(self, now: float) -> str:
        return f"{_prefix()}:chat:rate:{self.scope}:{self.identity}:{int(now // self.window)}"


@dataclass(frozen=True)
class Kind:
    """One kind of write, its settings (per visitor of a bot, per address; 0 switches one off)
    and the word the refusal uses."""

    name: str
    visitor_setting: str | None
    ip_setting: str
    what: str


KINDS: Final = {
    "message": Kind("message", "CHAT_RATE_VISITOR", "CHAT_RATE_IP", "messages"),
    "conversation": Kind("conversation", None, "CHAT_RATE_CONVERSATIONS_IP", "conversations"),
    "handoff": Kind("handoff", "CHAT_RATE_HANDOFF_VISITOR", "CHAT_RATE_HANDOFF_IP", "handoffs"),
    "rating": Kind("rating", "CHAT_RATE_RATINGS_VISITOR", "CHAT_RATE_RATINGS_IP", "ratings"),
    "lead": Kind("lead", "CHAT_RATE_LEADS_VISITOR", "CHAT_RATE_LEADS_IP", "leads"),
    "order": Kind("order", "CHAT_RATE_ORDERS_VISITOR", "CHAT_RATE_ORDERS_IP", "orders"),
    "page": Kind("page", "CHAT_RATE_PAGES_VISITOR", "CHAT_RATE_PAGES_IP", "pages"),
}


def _prefix() -> str:
    return str(settings.CACHES["default"].get("KEY_PREFIX", ""))


key_prefix = _prefix  # for the other chat keys in Redis (claims.py)


def limits_for(kind: str, *, bot_id: int, visitor_id: str, ip: str | None) -> list[Limit]:
    """The limits one write of `kind` counts against, from settings."""
    spec, window = KINDS[kind], settings.CHAT_RATE_WINDOW
    scope = "" if kind == "message" else f"{kind}-"  # message keys keep their old names
    limits = []
    if spec.visitor_setting:
        limits.append(Limit(f"{scope}visitor", f"{bot_id}:{visitor_id}", getattr(settings, spec.visitor_setting),
                            window))
    if ip:
        limits.append(Limit(f"{scope}ip", ip, getattr(settings, spec.ip_setting), window))
    return [limit for limit in limits if limit.limit > 0]


def message_limits(*, bot_id: int, visitor_id: str, ip: str | None) -> list[Limit]:
    return limits_for("message", bot_id=bot_id, visitor_id=visitor_id, ip=ip)


def _retry_after(limits: list[Limit], counts: list[Any], now: float) -> int | None:
    waits = [
        math.ceil(limit.window - (now % limit.window))
        for limit, count in zip(limits, counts, strict=True)
        if int(count) > limit.limit
    ]
    return max(waits) if waits else None


def _count(pipe: Any, limits: list[Limit], now: float) -> None:
    for limit in limits:
        key = limit.key(now)
        pipe.incr(key)
        pipe.expire(key, limit.window + 1)


async def hit(limits: list[Limit]) -> int | None:
    """Count one event against every limit. Returns None when all allow it, otherwise the seconds
    until the most restrictive window that was exceeded resets."""
    if not limits:
        return None
    now = time.time()
    pipe: Any = _client().pipeline(transaction=False)
    _count(pipe, limits, now)
    try:
        results = await pipe.execute()
    except redis.RedisError as exc:
        _unreachable("messages", exc)
        return None
    return _retry_after(limits, results[0::2], now)


def _unreachable(what: str, exc: Exception) -> None:
    logger.warning("rate limits: Redis unreachable (%s); %s let through uncounted", exc, what)


def hit_sync(limits: list[Limit], *, what: str) -> int | None:
    """`hit` for sync callers (services, views): None when every limit allows one more event,
    otherwise the seconds until the most restrictive exceeded window resets. A Redis that cannot
    be reached lets the event through, logged as `what`."""
    if not limits:
        return None
    now = time.time()
    pipe: Any = _sync().pipeline(transaction=False)
    _count(pipe, limits, now)
    try:
        results = pipe.execute()
    except redis.RedisError as exc:
        _unreachable(what, exc)
        return None
    return _retry_after(limits, results[0::2], now)


class OverLimit(Exception):
    """One write too many: it may be tried again in `retry_after` seconds; `what` names what was
    counted ("leads", "orders"...). Chat turns it into the visitor's error (chat/writes.py)."""

    def __init__(self, retry_after: int, *, what: str) -> None:
        self.retry_after = max(1, int(retry_after))
        self.what = what
        super().__init__(f"{what}: again in {self.retry_after} s")


def check(kind: str, *, bot_id: int, visitor_id: str, ip: str | None) -> None:
    """Count one write of `kind` from a service (sync); OverLimit when over a limit."""
    limits = limits_for(kind, bot_id=bot_id, visitor_id=visitor_id, ip=ip)
    retry_after = hit_sync(limits, what=KINDS[kind].what)
    if retry_after is not None:
        raise OverLimit(retry_after, what=KINDS[kind].what)


# --- open sockets per address ---------------------------------------------------------------------


def _sockets_key(ip: str) -> str:
    return f"{_prefix()}:chat:sockets:{ip}"


async def socket_open(*, ip: str | None, socket_id: str) -> bool:
    """Count a new socket from `ip`; False (and not counted) when the address already has
    CHAT_MAX_SOCKETS_IP sockets open across all processes."""
    cap = settings.CHAT_MAX_SOCKETS_IP
    if not ip or cap <= 0:
        return True
    now, key = time.time(), _sockets_key(ip)
    pipe: Any = _client().pipeline(transaction=True)
    pipe.zremrangebyscore(key, "-inf", now)
    pipe.zadd(key, {socket_id: now + SOCKET_TTL})
    pipe.zcard(key)
    pipe.expire(key, SOCKET_TTL + 1)
    try:
        _removed, _added, count, _expire = await pipe.execute()
        if int(count) <= cap:
            return True
        await _client().zrem(key, socket_id)
    except redis.RedisError as exc:
        _unreachable("a socket", exc)
        return True
    return False


async def socket_seen(*, ip: str | None, socket_id: str) -> None:
    """The socket is alive (it pinged): it keeps counting for another SOCKET_TTL."""
    if ip and settings.CHAT_MAX_SOCKETS_IP > 0:
        key = _sockets_key(ip)
        pipe: Any = _client().pipeline(transaction=False)
        pipe.zadd(key, {socket_id: time.time() + SOCKET_TTL}, xx=True)
        pipe.expire(key, SOCKET_TTL + 1)
        try:
            await pipe.execute()
        except redis.RedisError as exc:
            _unreachable("a ping", exc)


async def socket_closed(*, ip: str | None, socket_id: str) -> None:
    if ip and settings.CHAT_MAX_SOCKETS_IP > 0:
        try:
            await _client().zrem(_sockets_key(ip), socket_id)
        except redis.RedisError as exc:  # it stops counting after SOCKET_TTL
            _unreachable("a closing socket", exc)


# --- clients ---------------------------------------------------------------------------------------


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


def _sync() -> redis.Redis:
    """One blocking client for the services' worker threads (redis-py's pool is thread-safe)."""
    global _sync_client
    with _sync_lock:
        if _sync_client is None:
            pool = redis.BlockingConnectionPool.from_url(
                settings.REDIS_URL, max_connections=settings.CHANNELS_POOL_SIZE,
                timeout=settings.CHANNELS_POOL_TIMEOUT,
            )
            _sync_client = redis.Redis(connection_pool=pool)
        return _sync_client


sync_client = _sync  # the same client for the other chat keys in Redis (claims.py)
