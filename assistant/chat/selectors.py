"""Reads of the chat. Every query is scoped by conversation (and so by bot): a message id from
another conversation is simply not found."""

from __future__ import annotations

from typing import Final

from assistant.bots.models import Bot
from assistant.chat.models import Conversation, Message

RESUME_LAST: Final = 50
# Messages the chain sees as history: enough for "а в Казань?" to make sense, short enough for a prompt.
HISTORY_MESSAGES: Final = 6
_HISTORY_ROLES: Final = (Message.Role.VISITOR, Message.Role.BOT, Message.Role.OPERATOR)


def bot_for_widget(public_key: str) -> Bot | None:
    if not public_key or len(public_key) > 64:
        return None
    return Bot.objects.filter(public_key=public_key).first()


def open_conversation(*, bot: Bot, visitor_id: str) -> Conversation | None:
    return (
        Conversation.objects.select_related("bot").filter(bot=bot, visitor_id=visitor_id)
        .exclude(state=Conversation.State.CLOSED)
        .first()
    )


def message_by_client_id(*, conversation: Conversation, client_msg_id: str) -> Message | None:
    if not client_msg_id:
        return None
    return Message.objects.filter(conversation=conversation, client_msg_id=client_msg_id).first()


def bot_reply_to(message: Message) -> Message | None:
    return Message.objects.filter(reply_to=message, role=Message.Role.BOT).first()


def messages_after(*, conversation: Conversation, last_seen_id: int | None) -> list[Message]:
    """What a reconnecting widget missed: every message after `last_seen_id`, oldest first; the
    last RESUME_LAST messages when the widget has seen nothing yet."""
    messages = Message.objects.filter(conversation=conversation)
    if last_seen_id is not None:
        return list(messages.filter(id__gt=last_seen_id).order_by("id"))
    latest = list(messages.order_by("-id")[:RESUME_LAST])
    return latest[::-1]


def history_before(message: Message, limit: int = HISTORY_MESSAGES) -> list[tuple[str, str]]:
    """The turns before `message`, oldest first, as (role, text); system notes are left out."""
    rows = (
        Message.objects.filter(conversation_id=message.conversation_id, id__lt=message.pk, role__in=_HISTORY_ROLES)
        .order_by("-id")
        .values_list("role", "text")[:limit]
    )
    return [(role, text) for role, text in rows][::-1]


def recent_messages(conversation: Conversation, limit: int = 4) -> list[Message]:
    """The latest messages, newest first: what friction detection compares a new message with."""
    # Through the plain manager: the related manager would re-read each row's deferred conversation_id.
    rows = Message.objects.filter(conversation_id=conversation.pk).order_by("-id")
    return list(rows.only("id", "role", "text", "flags")[:limit])
