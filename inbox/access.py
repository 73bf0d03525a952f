"""Who may see which conversation in the operators' inbox: owners and operators of its bot
(`bots.selectors.inbox_bots`). Views and the operator socket both ask here, and a conversation
of another bot is "not found", exactly like one that does not exist."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from bots.selectors import inbox_bots
from chat import selectors
from chat.exceptions import NotFound
from chat.models import Conversation

# Marked, not translated here: the operator socket says it in its user's language (InboxConsumer._error).
NOT_FOUND = gettext_noop("Разговор не найден. Возможно, его удалили или он относится к другому боту.")


def inbox_bot_ids(user: Any) -> set[int]:
    return set(inbox_bots(user).values_list("pk", flat=True))


def access_conversation(user: Any, conversation_id: int, *, bot_ids: set[int] | None = None) -> Conversation:
    """The conversation if `user` may work on it, else NotFound (never a hint that it exists)."""
    ids = inbox_bot_ids(user) if bot_ids is None else bot_ids
    conversation = selectors.inbox_conversation(bot_ids=ids, conversation_id=conversation_id) if ids else None
    if conversation is None:
        raise NotFound(NOT_FOUND)
    return conversation


def access_conversation_id(user: Any, conversation_id: int, *, bot_ids: set[int] | None = None) -> int:
    """`access_conversation` for the operator socket's actions (open, take, message, typing,
    release, close): the same answer, NotFound included, from one primary-key lookup instead of
    the inbox row with its last message, which every action then re-reads under its lock anyway."""
    ids = inbox_bot_ids(user) if bot_ids is None else bot_ids
    found = selectors.inbox_conversation_id(bot_ids=ids, conversation_id=conversation_id) if ids else None
    if found is None:
        raise NotFound(NOT_FOUND)
    return found
