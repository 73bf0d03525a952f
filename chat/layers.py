"""The Redis channel layer, made cheap per socket and safe under bursts.

Two changes to channels_redis's RedisChannelLayer, both about thousands of mostly idle widget
sockets in one ASGI process:

1. **A bounded pool that waits instead of failing.** channels_redis gives each event loop a plain
   redis-py pool, which raises MaxConnectionsError once more commands are in flight than it has
   connections (100 by default). Every widget socket does a `group_add` on hello and a
   `group_discard` on close, so two thousand visitors leaving at once (a deploy, a network blip)
   asked for two thousand connections in the same instant and most discards failed. Here the pool
   is a BlockingConnectionPool: a command waits (up to `timeout` s) for one of `max_connections`
   connections, so a burst becomes a short queue and one process never opens more than
   `max_connections` connections to Redis. `group_add` sends its two commands in one round trip.

2. **One reader per process, one future per socket.** Every consumer waits on
   `receive(its channel)` for the whole life of its socket. channels_redis serves all of a
   process's channels from one Redis key already, but each waiting consumer keeps two extra tasks,
   a lock waiter and a queue of its own. Here one pump task per event loop reads the process's
   key and hands each message to its channel's waiting future (or keeps it, in order, until that
   channel asks again); a waiting consumer costs one future. The pump reads the key itself (one
   BZPOPMIN at a time) rather than through channels_redis's `receive_single`, whose per-channel
   lock lives on the layer, outlives event loops and, once a read was cancelled while it waited,
   stays bound to a loop that is gone: every later loop's reader then failed on it.

What must stay true:
- Messages for one channel are delivered in the order Redis gave them, none twice.
- A message for a channel that is not waiting right now (its consumer is busy with a frame) is
  kept, up to the layer's capacity, until that channel asks again; kept messages nobody asked
  for within the layer's `expiry` (a consumer that went away) are dropped, so nothing grows.
- A consumer that leaves (its receive is cancelled) takes what was kept for it along. The pump is
  never cancelled from under a busy consumer: it stops itself after a read that finds nothing
  while no channel is waiting (at most `brpop_timeout` s later), and `close_pools` stops it at
  shutdown. A message popped by a read cancelled at shutdown is lost with the sockets it was for.
- A cancelled pump ends, at the latest when its current read returns, even when the cancel was
  lost inside redis-py (see `_pump`): a reader that ignored it would keep an event loop from ever
  closing (a test run's teardown waited on exactly that).
- Only one pump reads a loop's key at a time: a new one starts only after the last has ended.
- A Redis error in the pump is logged and retried after a pause while anyone waits; the waiting
  consumers keep waiting (the messages stay in Redis) instead of all failing.
- `max_connections` leaves room beyond the pump's connection, which sits in BZPOPMIN for up to
  5 s at a time (settings refuse fewer than 4).
- A Redis that comes back empty (a restart without persistence, a failover, a flush) loses every
  group membership: the layer remembers the groups of this process's channels, and the pump puts
  them back as soon as it finds its marker key gone (checked at least every `brpop_timeout`
  seconds while anyone waits), so operator messages reach the sockets again within seconds
  without any socket having to reconnect. Events sent while the memberships were gone are lost;
  the rows are saved and the widget catches up on its next hello.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import redis
from channels_redis.core import RedisChannelLayer
from redis import asyncio as aioredis

logger = logging.getLogger("spravka.chat")

PUMP_RETRY_SECONDS = 1.0
MARKER_SECONDS = 60  # the pump's marker key outlives the longest pause between its checks


@dataclass
class _Mailboxes:
    """The process-local channels of one event loop: who is waiting, and what arrived early."""

    waiting: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    kept: dict[str, collections.deque[dict[str, Any]]] = field(default_factory=dict)
    kept_at: dict[str, float] = field(default_factory=dict)
    pruned_at: float = field(default_factory=time.monotonic)
    pump: asyncio.Task[None] | None = None


class BoundedRedisChannelLayer(RedisChannelLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mailboxes: dict[asyncio.AbstractEventLoop, _Mailboxes] = {}
        self._memberships: dict[str, set[str]] = {}  # this process's channel -> its groups (to re-join)

    def create_pool(self, index: int) -> aioredis.BlockingConnectionPool:
        host: dict[str, Any] = dict(self.hosts[index])
        address = host.pop("address")
        return aioredis.BlockingConnectionPool.from_url(address, **host)

    async def group_add(self, group: str, channel: str) -> None:
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        if "!" in channel:  # remembered first: a Redis away right now gets it on its return
            self._memberships.setdefault(channel, set()).add(group)
        group_key = self._group_key(group)
        connection = self.connection(self.consistent_hash(group))
        pipe = connection.pipeline(transaction=False)
        pipe.zadd(group_key, {channel: time.time()})
        pipe.expire(group_key, self.group_expiry)
        await pipe.execute()

    async def group_discard(self, group: str, channel: str) -> None:
        groups = self._memberships.get(channel)
        if groups is not None:
            groups.discard(group)
            if not groups:
                del self._memberships[channel]
        await super().group_discard(group, channel)

    async def _rejoin_if_emptied(self, process_channel: str) -> int:
        """Put this process's memberships back when Redis lost them: the marker key (set with NX)
        was missing. Returns how many memberships were written (0 when nothing was lost)."""
        marker = f"{self.prefix}marker:{process_channel}"
        connection = self.connection(self.consistent_hash(process_channel))
        pipe = connection.pipeline(transaction=False)
        pipe.set(marker, "1", nx=True, ex=MARKER_SECONDS)
        pipe.expire(marker, MARKER_SECONDS)
        was_missing, _ = await pipe.execute()
        memberships = [(group, channel) for channel, groups in list(self._memberships.items()) for group in groups]
        if not was_missing or not memberships:
            return 0
        now = time.time()
        for index in range(len(self.hosts)):
            pipe = self.connection(index).pipeline(transaction=False)
            mine = [(g, c) for g, c in memberships if self.consistent_hash(g) == index]
            for group, channel in mine:
                pipe.zadd(self._group_key(group), {channel: now})
                pipe.expire(self._group_key(group), self.group_expiry)
            if mine:
                await pipe.execute()
        logger.warning("channel layer: Redis lost this process's groups; %d memberships re-joined", len(memberships))
        return len(memberships)

    async def receive(self, channel: str) -> dict[str, Any]:
        if "!" not in channel:  # a shared channel (workers): channels_redis's own way
            return dict(await super().receive(channel))
        assert self.require_valid_channel_name(channel)
        assert self.non_local_name(channel).endswith(self.client_prefix + "!"), "Wrong client prefix"
        loop = asyncio.get_running_loop()
        boxes = self._mailboxes.setdefault(loop, _Mailboxes())
        kept = boxes.kept.get(channel)
        if kept:
            message = kept.popleft()
            if not kept:
                del boxes.kept[channel], boxes.kept_at[channel]
            return message
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        boxes.waiting[channel] = future
        if boxes.pump is None or boxes.pump.done():  # done: e.g. cancelled before its first step
            boxes.pump = loop.create_task(self._pump(boxes, self.non_local_name(channel)))
        try:
            return await future
        except asyncio.CancelledError:
            self._leave(boxes, channel)
            raise
        finally:
            if boxes.waiting.get(channel) is future:
                del boxes.waiting[channel]

    async def close_pools(self) -> None:
        """Stop this loop's reader before its connections are closed (flush, shutdown, tests)."""
        boxes = self._mailboxes.pop(asyncio.get_running_loop(), None)
        if boxes is not None and boxes.pump is not None:
            boxes.pump.cancel()
            await asyncio.gather(boxes.pump, return_exceptions=True)
        await super().close_pools()

    def _leave(self, boxes: _Mailboxes, channel: str) -> None:
        """The channel's consumer is gone: forget its messages (the pump stops by itself)."""
        boxes.waiting.pop(channel, None)
        boxes.kept.pop(channel, None)
        boxes.kept_at.pop(channel, None)
        self._memberships.pop(channel, None)

    async def _pump(self, boxes: _Mailboxes, process_channel: str) -> None:
        loop = asyncio.get_running_loop()
        key = self.prefix + process_channel
        task = asyncio.current_task()
        checked_at = 0.0
        try:
            while self._mailboxes.get(loop) is boxes:  # close_pools takes the boxes away: stop
                try:
                    if time.monotonic() - checked_at >= 1.0:
                        await self._rejoin_if_emptied(process_channel)
                        checked_at = time.monotonic()
                    popped = await self.connection(self.consistent_hash(process_channel)).bzpopmin(
                        key, timeout=self.brpop_timeout
                    )
                except Exception as exc:
                    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):  # an outage: no traceback
                        logger.warning("channel layer: Redis unreachable (%s); retrying", exc)
                    else:
                        logger.exception("channel layer: reading %s failed; retrying", process_channel)
                    popped = None
                    if boxes.waiting:
                        await asyncio.sleep(PUMP_RETRY_SECONDS)
                if popped is not None:
                    message = self.deserialize(popped[1])
                    target = message.pop("__asgi_channel__", process_channel)
                    for channel in target if isinstance(target, list) else [target]:
                        self._deliver(boxes, channel, message)
                if task is not None and task.cancelling():
                    # Python 3.11's asyncio.wait_for (redis-py sends each command through it) drops
                    # a cancel that arrives as the command is written; the read then runs its
                    # full course. Honour that cancel now (what it read is delivered first).
                    raise asyncio.CancelledError
                if popped is None and not boxes.waiting:
                    return
        finally:
            if boxes.pump is task:
                boxes.pump = None
                if not boxes.waiting and not boxes.kept and self._mailboxes.get(loop) is boxes:
                    del self._mailboxes[loop]

    def _deliver(self, boxes: _Mailboxes, channel: str, message: dict[str, Any]) -> None:
        future = boxes.waiting.pop(channel, None)
        if future is not None and not future.done():
            future.set_result(message)  # nothing is kept for a waiting channel: order holds
            return
        now = time.monotonic()
        kept = boxes.kept.get(channel)
        if kept is None:
            kept = boxes.kept[channel] = collections.deque(maxlen=self.get_capacity(channel))
        kept.append(message)  # over capacity the oldest is dropped, as channels_redis does
        boxes.kept_at[channel] = now
        if now - boxes.pruned_at > self.expiry:
            boxes.pruned_at = now
            for stale in [name for name, at in boxes.kept_at.items() if now - at > self.expiry]:
                del boxes.kept[stale], boxes.kept_at[stale]
