"""Publishing after commit from every kind of caller: a socket's worker thread hands events to its
loop's sender; any other thread sends them itself, even one that runs an event loop of its own."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer

from chat import events


async def test_a_synchronous_caller_inside_a_running_event_loop_still_publishes():
    layer = get_channel_layer()
    assert layer is not None
    channel = await layer.new_channel()
    group = events.conversation_group(990_001)
    await layer.group_add(group, channel)
    try:
        # A plain call from the loop's own thread (a script driving a browser does this): no await
        # possible here, and waiting on this loop would deadlock; the events must leave all the same.
        events._send_all([(group, {"type": "chat.state", "state": "operator"}),
                          (group, {"type": "chat.typing", "on": True, "by": "operator"})])
        first = await asyncio.wait_for(layer.receive(channel), 10)
        second = await asyncio.wait_for(layer.receive(channel), 10)
        assert (first["type"], first["state"]) == ("chat.state", "operator")
        assert (second["type"], second["on"]) == ("chat.typing", True)
    finally:
        await layer.group_discard(group, channel)
