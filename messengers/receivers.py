"""What messengers hear from the chat: something a visitor in a messenger should see that they
did not cause themselves (an operator's message, «оператор на связи», a close, a scheduled note),
sent there as deliveries from a worker; and a conversation that started waiting, told to the
operators who linked their Telegram (messengers/operators.py), and, once someone takes it, that
it is taken."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from chat.models import Conversation, Message
from chat.signals import conversation_taken, conversation_waiting, visitor_told
from messengers import delivery, operators, services
from messengers.models import Connection


@receiver(visitor_told, dispatch_uid="messengers.visitor_told")
def tell_visitor(*, conversation_id: int, channel: str, message_ids: list[int], **_: Any) -> None:
    if channel not in Connection.Kind.values or not message_ids:
        return
    conversation = Conversation.objects.filter(pk=conversation_id).only("bot_id", "visitor_id").first()
    if conversation is None:
        return
    chat = services.chat_of_visitor(bot_id=conversation.bot_id, kind=channel, visitor=conversation.visitor_id)
    if chat is None or not chat.connection.working:
        return
    messages = list(Message.objects.filter(pk__in=message_ids, conversation_id=conversation_id).order_by("id"))
    delivery.deliveries_for_messages(chat, messages)
    delivery.deliver_soon(chat)


@receiver(conversation_waiting, dispatch_uid="messengers.conversation_waiting")
def tell_operators(*, conversation_id: int, bot_id: int, message_id: int, **_: Any) -> None:
    operators.waiting_notify(conversation_id=conversation_id, bot_id=bot_id, message_id=message_id)


@receiver(conversation_taken, dispatch_uid="messengers.conversation_taken")
def mark_notices_taken(*, conversation_id: int, bot_id: int, holder: str, **_: Any) -> None:
    operators.notices_taken(conversation_id=conversation_id, bot_id=bot_id, holder=holder)
