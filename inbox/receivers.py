"""The inbox listens to the chat (chat.signals): a conversation that starts waiting is given out in
turn when the bot's owner chose so (inbox/assignment.py);
and it is pushed to the browsers of the bot's operators that agreed to Web Push (inbox/push.py),
from a worker."""

from __future__ import annotations

from typing import Any

from chat.signals import conversation_waiting


def on_conversation_waiting(sender: Any, *, bot_id: int, **kwargs: Any) -> None:
    from inbox.assignment import conversation_routed

    conversation_routed(bot_id=bot_id)


def push_operators(sender: Any, *, conversation_id: int, **kwargs: Any) -> None:
    """Queued after the routing above has run: a conversation given out in turn no longer waits, and
    the worker sends nothing for it (inbox.push.push_send checks)."""
    from inbox import push, tasks

    if push.push_enabled():
        tasks.push_waiting.delay(conversation_id)


def connect() -> None:
    conversation_waiting.connect(on_conversation_waiting, dispatch_uid="inbox.on_conversation_waiting")
    conversation_waiting.connect(push_operators, dispatch_uid="inbox.push_operators")
