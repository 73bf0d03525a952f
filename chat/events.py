"""What happened in a conversation, told to whoever listens, after the change is committed.

Chat knows nothing about the operators' inbox (docs/architecture.md, "Apps, lowest first"): it publishes to two kinds
of channel-layer groups, and the consumers that care subscribe.

- `conversation_group(id)`: the visitor's open widget sockets. Events `chat.message`,
  `chat.state` and `chat.typing`, for what the visitor did not cause on their own socket
  (operator messages and actions, notes made by scheduled tasks).
- `bot_feed_group(bot_id)`: everything that changes a conversation of the bot (new messages of
  any role, a state change, an assignment), as one `chat.conversation` event carrying the
  conversation as the operator protocol shows it (`frames.conversation_json`) and the messages.

What must stay true:
- Nothing is published before its transaction commits (a rolled-back take must never reach an
  operator), hence `transaction.on_commit` everywhere.
- Building an event reads no rows: the conversation (with its bot and operator) and the message
  are already in hand, and `unread` is a column, so a visitor message costs one Redis round trip
  per group, not a query.
- A broadcast that fails (Redis down for a moment) is logged and dropped: the rows are saved,
  and every client catches up from them on its next hello.
- Events leave in the order they were published. Inside an ASGI process a service's worker thread
  does not wait for Redis: it hands the events to one sender task per event loop (the outbox),
  which sends them one after another; elsewhere (Celery, commands) they are sent on the spot.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from redis.exceptions import RedisError

from chat import frames, signals
from chat.models import Conversation, Message

logger = logging.getLogger("spravka.chat")


def conversation_group(conversation_id: int) -> str:
    """The channel-layer group of one conversation's widget sockets."""
    return f"chat.conversation.{conversation_id}"


def bot_feed_group(bot_id: int) -> str:
    """The channel-layer group that hears every change of every conversation of one bot."""
    return f"chat.bot.{bot_id}"


Event = tuple[str, dict[str, Any]]  # (group, event)


async def _send_in_order(events: list[Event]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    for group, event in events:
        try:
            await layer.group_send(group, event)
        except Exception as exc:  # the rows are saved; clients catch up on their next hello
            outage = isinstance(exc, RedisError)  # Redis away for a moment: no traceback for each event
            logger.warning("event %s to %s not published: %s", event.get("type"), group, exc, exc_info=not outage)


@dataclass
class _Outbox:
    """Events waiting to leave one event loop, and the task sending them (it ends when the queue is
    empty and starts again with the next event, so no task outlives a test's loop)."""

    queue: collections.deque[list[Event]] = field(default_factory=collections.deque)
    sender: asyncio.Task[None] | None = None


_outboxes: dict[asyncio.AbstractEventLoop, _Outbox] = {}


def _main_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop that called this worker thread through sync_to_async (a socket's consumer),
    if it is alive; None in Celery, commands and other plain threads."""
    if getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None) != os.getpid():
        return None
    loop: asyncio.AbstractEventLoop | None = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop if loop is not None and loop.is_running() else None


def _enqueue(loop: asyncio.AbstractEventLoop, events: list[Event]) -> None:
    """In the loop's own thread: queue the events and make sure a sender runs."""
    for gone in [known for known in _outboxes if known.is_closed()]:
        del _outboxes[gone]
    box = _outboxes.setdefault(loop, _Outbox())
    box.queue.append(events)
    if box.sender is None or box.sender.done():
        box.sender = loop.create_task(_drain(box))


async def _drain(box: _Outbox) -> None:
    while box.queue:
        await _send_in_order(box.queue.popleft())


def _send_here(events: list[Event]) -> None:
    """Send and wait, from a thread that is not a socket's worker. A thread that runs an event loop
    of its own (a synchronous caller inside one, e.g. a script driving a browser) cannot wait on it:
    the events leave from a short-lived thread instead. Never raises: the rows are saved."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runs_a_loop = False
    else:
        runs_a_loop = True
    try:
        if not runs_a_loop:
            async_to_sync(_send_in_order)(events)
            return
        sender = threading.Thread(target=async_to_sync(_send_in_order), args=(events,), name="chat-events")
        sender.start()
        sender.join()
    except Exception:
        logger.warning("events %s not published", [event.get("type") for _group, event in events], exc_info=True)


def _send_all(events: list[Event]) -> None:
    if not events:
        return
    loop = _main_loop()
    if loop is None:
        _send_here(events)
        return
    try:
        loop.call_soon_threadsafe(_enqueue, loop, events)
    except RuntimeError:  # the loop closed in between: send from here
        _send_here(events)


def publish(
    conversation: Conversation, *, messages: Iterable[Message] = (), to_visitor: bool = False,
    state_changed: bool = False,
) -> None:
    """After commit: tell the bot's feed about `conversation` (once per message, or once when there
    is none), and with `to_visitor` also the visitor's sockets (messages, then the state)."""
    messages = list(messages)
    # The conversation's preview: the last message a person or the bot said (system notes are not one).
    said = [message for message in messages if message.role != Message.Role.SYSTEM]
    conversation_json = frames.conversation_json(conversation, last_message=said[-1] if said else None)
    message_jsons = [frames.message_json(message) for message in messages]
    state = conversation.state
    group = conversation_group(conversation.pk)
    feed = bot_feed_group(conversation.bot_id)

    events: list[Event] = []
    if to_visitor:
        events += [(group, {"type": "chat.message", "message": message_json}) for message_json in message_jsons]
        if state_changed:
            events.append((group, {"type": "chat.state", "state": state}))
    # One feed event per change, with every message it stored (a question and its answer): one
    # group_send, however many messages.
    events.append((feed, {
        "type": "chat.conversation", "bot_id": conversation.bot_id, "conversation": conversation_json,
        "messages": message_jsons,
    }))
    transaction.on_commit(lambda: _send_all(events))
    if to_visitor and conversation.channel != Conversation.Channel.WIDGET:  # no socket there: a messenger
        signals.visitor_told_on_commit(
            conversation, [message.pk for message in messages], state if state_changed else "")


def publish_to_feed(bot_id: int, event: dict[str, Any]) -> None:
    """After commit: an event of an app above chat (the inbox's notes) to the bot's feed, in order
    with chat's own events; chat does not read it."""
    events: list[Event] = [(bot_feed_group(bot_id), {**event, "bot_id": bot_id})]
    transaction.on_commit(lambda: _send_all(events))


def publish_typing(conversation_id: int, *, on: bool, by: str) -> None:
    """Typing is not stored: it goes straight to the visitor's sockets."""
    _send_all([(conversation_group(conversation_id), {"type": "chat.typing", "on": on, "by": by})])


def publish_csat_ask(conversation_id: int) -> None:
    """After commit: the visitor's widgets ask for the finished conversation's stars (chat/csat.py)."""
    event = {"type": "chat.csat", "conversation_id": conversation_id}
    events: list[Event] = [(conversation_group(conversation_id), event)]
    transaction.on_commit(lambda: _send_all(events))
