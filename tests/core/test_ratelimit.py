"""The widget's message limits on real Redis: a burst of sockets sending at once waits for the
process's bounded pool instead of failing, and every message is counted."""

from __future__ import annotations

import asyncio
import uuid

from core import ratelimit


async def test_a_burst_of_messages_waits_for_the_bounded_pool_and_is_counted(settings):
    settings.CHANNELS_POOL_SIZE = 4
    identity = uuid.uuid4().hex
    visitors = [ratelimit.Limit("visitor", f"{identity}:{n}", limit=5, window=60) for n in range(300)]
    shared_ip = ratelimit.Limit("ip", identity, limit=250, window=60)

    waits = await asyncio.gather(*(ratelimit.hit([visitor, shared_ip]) for visitor in visitors))

    # 300 in flight at once on 4 connections: none failed, all counted against the shared address.
    assert sum(w is None for w in waits) == 250
    assert all(0 < w <= 60 for w in waits if w is not None)
    pool = ratelimit._client().connection_pool
    assert pool.max_connections == 4
    assert len(pool._available_connections) + len(pool._in_use_connections) <= 4
