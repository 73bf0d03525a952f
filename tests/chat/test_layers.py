"""The widget's channel layer on real Redis: bursts of group changes wait for a connection instead
of failing, and the one-reader-per-process delivery keeps every channel's messages, in order."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from django.conf import settings

from chat.layers import BoundedRedisChannelLayer


def _layer(max_connections: int = 4) -> BoundedRedisChannelLayer:
    """A layer like the configured one, with a tiny pool and a prefix of its own."""
    config: Any = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    host = {**config["hosts"][0], "max_connections": max_connections, "timeout": 30}
    return BoundedRedisChannelLayer(hosts=[host], prefix=f"{config['prefix']}-layer-{uuid.uuid4().hex[:8]}")


async def test_a_burst_of_group_changes_waits_for_the_small_pool_instead_of_failing():
    layer = _layer(max_connections=4)
    channels = [await layer.new_channel() for _ in range(300)]
    try:
        await asyncio.gather(*(layer.group_add(f"chat.conversation.{i}", c) for i, c in enumerate(channels)))
        await asyncio.gather(*(layer.group_discard(f"chat.conversation.{i}", c) for i, c in enumerate(channels)))
        pool = layer.connection(0).connection_pool
        assert pool.max_connections == 4
        assert len(pool._available_connections) + len(pool._in_use_connections) <= 4
    finally:
        await layer.flush()


async def test_group_messages_reach_each_waiting_channel_and_early_ones_are_kept_in_order():
    layer = _layer()
    first, second = await layer.new_channel(), await layer.new_channel()
    try:
        await layer.group_add("chat.conversation.1", first)
        await layer.group_add("chat.conversation.1", second)
        waiting = asyncio.create_task(layer.receive(first))
        await asyncio.sleep(0.1)
        await layer.group_send("chat.conversation.1", {"type": "chat.state", "state": "operator"})
        assert await asyncio.wait_for(waiting, 10) == {"type": "chat.state", "state": "operator"}
        # `second` was not receiving when these came (its consumer busy with a frame): kept, in order.
        for n in range(3):
            await layer.send(second, {"type": "chat.message", "n": n})
        await asyncio.sleep(0.3)
        got: list[dict[str, Any]] = [await asyncio.wait_for(layer.receive(second), 10) for _ in range(4)]
        assert [m.get("n") for m in got] == [None, 0, 1, 2]
    finally:
        await layer.flush()


async def test_a_channel_that_stops_receiving_is_forgotten_and_the_reader_stops_after_the_last_one():
    layer = _layer()
    layer.brpop_timeout = 1
    gone, staying = await layer.new_channel(), await layer.new_channel()
    try:
        receivers = [asyncio.create_task(layer.receive(c)) for c in (gone, staying)]
        await asyncio.sleep(0.1)
        boxes = layer._mailboxes[asyncio.get_running_loop()]
        pump = boxes.pump
        assert pump is not None and set(boxes.waiting) == {gone, staying}

        receivers[0].cancel()
        await asyncio.gather(receivers[0], return_exceptions=True)
        assert set(boxes.waiting) == {staying} and not pump.done()

        receivers[1].cancel()
        await asyncio.gather(receivers[1], return_exceptions=True)
        assert not boxes.waiting
        # The reader is not cancelled from under anyone: it ends after its next empty read.
        await asyncio.wait_for(pump, 10)
        assert not pump.cancelled() and asyncio.get_running_loop() not in layer._mailboxes
    finally:
        await layer.flush()


def test_the_reader_keeps_working_across_event_loops_after_a_receive_is_cancelled_mid_read(caplog):
    """One layer serves many event loops in a test run (one per test) and in async_to_sync. A receive
    cancelled right after a message arrived must not leave state bound to its loop behind."""
    layer = _layer()

    async def one_visit(n: int) -> dict[str, Any]:
        channel = await layer.new_channel()
        await layer.group_add("chat.conversation.7", channel)
        receiving = asyncio.create_task(layer.receive(channel))
        await asyncio.sleep(0.05)
        await layer.group_send("chat.conversation.7", {"type": "chat.state", "n": n})
        got = await asyncio.wait_for(receiving, 10)
        again = asyncio.create_task(layer.receive(channel))  # the socket closes while it waits
        await asyncio.sleep(0)
        again.cancel()
        await asyncio.gather(again, return_exceptions=True)
        await layer.group_discard("chat.conversation.7", channel)
        return got

    try:
        for n in range(4):
            with asyncio.Runner() as runner:
                assert runner.run(one_visit(n)) == {"type": "chat.state", "n": n}
        assert "reading" not in caplog.text
    finally:
        with asyncio.Runner() as runner:
            runner.run(layer.flush())


async def test_a_cancelled_reader_ends_cancelled_even_when_redis_py_drops_the_cancel():
    """Python 3.11's asyncio.wait_for, which redis-py sends every command through, drops a cancel
    that lands as the command is written. Cancels are sent at every step of a read's start here;
    each must end the reader as cancelled, not let it finish its read and carry on."""
    layer = _layer()
    layer.brpop_timeout = 1
    try:
        for steps in range(1, 9):
            await layer.connection(0).ping()  # a connected pool: the write comes within a few steps
            channel = await layer.new_channel()
            receiving = asyncio.create_task(layer.receive(channel))
            for _ in range(steps):
                await asyncio.sleep(0)
            pump = layer._mailboxes[asyncio.get_running_loop()].pump
            assert pump is not None
            pump.cancel()
            receiving.cancel()
            await asyncio.wait_for(asyncio.gather(pump, receiving, return_exceptions=True), 10)
            assert pump.cancelled(), f"the reader swallowed a cancel sent {steps} steps in"
        # Even after a reader cancelled before its first step, the next receive gets a reader.
        channel = await layer.new_channel()
        receiving = asyncio.create_task(layer.receive(channel))
        await asyncio.sleep(0.1)
        await layer.send(channel, {"type": "chat.state", "state": "bot"})
        assert await asyncio.wait_for(receiving, 10) == {"type": "chat.state", "state": "bot"}
    finally:
        await layer.flush()


async def test_a_redis_error_in_the_reader_is_logged_and_the_waiting_socket_still_gets_its_message(caplog):
    layer = _layer()
    layer.brpop_timeout = 1
    channel = await layer.new_channel()
    key = layer.prefix + layer.non_local_name(channel)
    redis = layer.connection(0)
    await redis.set(key, "not a sorted set")  # every read of the process's key now fails (WRONGTYPE)
    try:
        receiving = asyncio.create_task(layer.receive(channel))
        await asyncio.sleep(0.3)
        assert "reading" in caplog.text and "WRONGTYPE" in caplog.text and not receiving.done()

        await redis.delete(key)
        await layer.send(channel, {"type": "chat.state", "state": "operator"})
        assert await asyncio.wait_for(receiving, 10) == {"type": "chat.state", "state": "operator"}
    finally:
        await layer.flush()
