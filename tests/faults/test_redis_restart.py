"""Redis restarted under 50 live widget sockets of one uvicorn process, and back empty (no
persistence: channel-layer groups, rate-limit counters, answer claims all gone). Every question
asked before, at, during and after the restart is answered exactly once (the database and the
frames agree), the sockets stay usable, and operator events reach them again because the channel
layer re-joins its groups by itself (chat/layers.py)."""

from __future__ import annotations

import asyncio

import pytest

from tests.faults.harness import Fleet, Visitor, database_url
from tests.faults.scenarios import chat_around, groups_heard, redis_restart

pytestmark = pytest.mark.django_db(transaction=True)

VISITORS = 50
# One address (127.0.0.1) for all visitors: room for them under the per-address limits.
CROWD_ENV = {"CHAT_RATE_IP": "10000", "CHAT_RATE_CONVERSATIONS_IP": "10000", "CHAT_MAX_SOCKETS_IP": "10000"}


async def test_fifty_sockets_ride_out_a_redis_restart_with_every_message_answered_once(
    fleet: Fleet, knowledge, shop
):
    from django.db import connection

    redis = fleet.redis()
    await asyncio.to_thread(redis.start)
    app = fleet.uvicorn("asgi", {"REDIS_URL": redis.redis_url, **CROWD_ENV})
    await asyncio.to_thread(app.start)
    heard: dict[str, float] = {}

    async def after_return(visitors: list[Visitor]) -> None:
        heard["seconds"] = await groups_heard(redis, visitors)

    outcome, _visitors = await chat_around(
        redis_restart(redis), url=app.url, public_key=shop.public_key,
        database_url=database_url(connection.settings_dict), visitors=VISITORS, during=after_return,
    )

    assert outcome.sent == 4 * VISITORS
    assert (outcome.answered, outcome.lost, outcome.doubled) == (outcome.sent, 0, 0), outcome
    assert outcome.errors_text == "none"  # the restart never showed a visitor an error
    assert outcome.reconnects == 0  # no socket dropped: the process rode it out
    assert heard["seconds"] < 30
    assert app.alive() and "server_error" not in app.tail(200_000) and app.tracebacks() == 0
