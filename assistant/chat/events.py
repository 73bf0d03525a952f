"""What happened in a conversation, told to whoever listens, after the change is committed.

Chat knows nothing about the operators' inbox (DESIGN.md, Boundaries): it publishes to two kinds
of channel-layer groups, and the consumers that care subscribe.

- `conversation_group(id)`: the visitor's open widget sockets. Events `chat.message`,
  `chat.state` and `chat.typing`, for what the visitor did not cause on their own socket
  (operator messages and actions, notes made by scheduled tasks).
- `bot_feed_group(bot_id)`: everything that changes a conversation of the bot (a new message of
  any role, a state change, an assignment), as one `chat.conversation` event carrying the
  conversation as the operator protocol shows it (`frames.conversation_json`) and the message.

What must stay true:
- Nothing is published before its transaction commits (a rolled-back take must never reach an
  operator), hence `transaction.on_commit` everywhere.
- Building an event reads no rows: the conversation (with its bot and operator) and the message
  are already in hand, and `unread` is a column, so a visitor message costs one Redis round trip
  per group, not a query.
- A broadcast that fails (Redis down for a moment) is logged and dropped: the rows are saved,
  and every client catches up from them on its next hello.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from assistant.chat import frames
from assistant.chat.models import Conversation, Message

logger = logging.getLogger("spravka.chat")


def conversation_group(conversation_id: int) -> str:
    """The channel-layer group of one conversation's widget sockets."""
    return f"chat.conversation.{conversation_id}"


def bot_feed_group(bot_id: int) -> str:
    """The channel-layer group that hears every change of every conversation of one bot."""
    return f"chat.bot.{bot_id}"


def _send(*sends: tuple[str, dict[str, Any]]) -> None:
    """Send (group, event) pairs in this order, in one trip to the event loop: called from a
    worker thread, each `async_to_sync` waits for the loop's turn, and a busy loop (an inbox
    socket per operator, each hearing every message of its bots) made that wait the largest
    part of a message's time."""
    layer = get_channel_layer()
    if layer is None:
        return

    async def send_all() -> None:
        for group, event in sends:
            try:
                await layer.group_send(group, event)
            except Exception:  # the rows are saved; clients catch up on their next hello
                logger.warning("event %s to %s not published", event.get("type"), group, exc_info=True)

    try:
        async_to_sync(send_all)()
    except Exception:
        logger.warning("events %s not published", [event.get("type") for _group, event in sends], exc_info=True)


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
    message_jsons: list[dict[str, Any] | None] = [frames.message_json(message) for message in messages]
    state = conversation.state
    group = conversation_group(conversation.pk)
    feed = bot_feed_group(conversation.bot_id)

    sends: list[tuple[str, dict[str, Any]]] = []
    if to_visitor:
        sends += [(group, {"type": "chat.message", "message": message_json}) for message_json in message_jsons]
        if state_changed:
            sends.append((group, {"type": "chat.state", "state": state}))
    sends += [(feed, {
        "type": "chat.conversation", "bot_id": conversation.bot_id, "conversation": conversation_json,
        "message": message_json,
    }) for message_json in message_jsons or [None]]
    transaction.on_commit(lambda: _send(*sends))


def publish_typing(conversation_id: int, *, on: bool, by: str) -> None:
    """Typing is not stored: it goes straight to the visitor's sockets."""
    _send((conversation_group(conversation_id), {"type": "chat.typing", "on": on, "by": by}))
