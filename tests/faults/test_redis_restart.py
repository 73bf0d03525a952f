"""Redis restarted under 50 live widget sockets of one uvicorn process, and back empty (no
persistence: channel-layer groups, rate-limit counters, answer claims all gone). Every question
asked before, at, during and after the restart is answered exactly once (the database and the
frames agree), the sockets stay usable, and operator events reach them again because the channel
layer re-joins its groups by itself (assistant/chat/layers.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.faults.harness import Fleet, RedisServer, Visitor, database_url
from tests.faults.scenarios import Fault, chat_around

pytestmark = pytest.mark.django_db(transaction=True)

VISITORS = 50
# One address (127.0.0.1) for all visitors: room for them under the per-address limits.
CROWD_ENV = {"CHAT_RATE_IP": "10000", "CHAT_RATE_CONVERSATIONS_IP": "10000", "CHAT_MAX_SOCKETS_IP": "10000"}
PROBE = "Проверка связи оператора"


def redis_restart(redis: RedisServer, outage: float = 1.0) -> Fault:
    async def cut() -> None:
        await asyncio.to_thread(redis.kill)

    async def restore() -> float:
        return await asyncio.to_thread(redis.start)

    return Fault("Redis restarted (back empty)", cut, restore, outage)


def layer_on(redis: RedisServer) -> Any:
    from django.conf import settings

    from assistant.chat.layers import BoundedRedisChannelLayer

    config: Any = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    return BoundedRedisChannelLayer(hosts=[{"address": redis.redis_url}], prefix=config["prefix"])


def conversation_id(visitor: Visitor) -> int:
    return int(next(f.data["conversation_id"] for f in visitor.frames if f.data["type"] == "welcome"))


def heard_probe(visitor: Visitor) -> bool:
    return any(f.data["type"] == "message" and f.data["message"].get("text") == PROBE for f in visitor.frames)


async def groups_heard(redis: RedisServer, visitors: list[Visitor], timeout: float = 30.0) -> float:
    """Seconds until an operator message sent to each conversation's group reached every socket
    (sent again every half second to the ones that have not heard it yet)."""
    from assistant.chat.events import conversation_group

    layer = layer_on(redis)
    started = time.monotonic()
    try:
        while not all(heard_probe(v) for v in visitors):
            if time.monotonic() - started > timeout:
                deaf = [v.visitor_id for v in visitors if not heard_probe(v)]
                raise AssertionError(f"{len(deaf)} sockets never heard their group again: {deaf[:5]}")
            for visitor in visitors:
                if not heard_probe(visitor):
                    await layer.group_send(conversation_group(conversation_id(visitor)), {
                        "type": "chat.message",
                        "message": {"id": 0, "role": "operator", "text": PROBE, "links": [], "buttons": []},
                    })
            await asyncio.sleep(0.5)
        return time.monotonic() - started
    finally:
        await layer.close_pools()


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
    assert app.alive() and "server_error" not in app.tail(200_000)
