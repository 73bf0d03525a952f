"""The inbox listens to the chat (chat.signals): a conversation that starts waiting is given out in
turn when the bot's owner chose so (inbox/assignment.py)."""

from __future__ import annotations

from typing import Any

from chat.signals import conversation_waiting


def on_conversation_waiting(sender: Any, *, bot_id: int, **kwargs: Any) -> None:
    from inbox.assignment import conversation_routed

    conversation_routed(bot_id=bot_id)


def connect() -> None:
    conversation_waiting.connect(on_conversation_waiting, dispatch_uid="inbox.on_conversation_waiting")
