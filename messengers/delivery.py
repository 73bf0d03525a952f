"""Calls to a messenger that a visitor should see, logged one `Delivery` each and sent in order per
chat: the one module that writes a `Delivery`.

What must stay true:
- One chat's deliveries leave in the order they were made; a call that must wait (429 with its
  retry_after, a 5xx, a timeout) holds the ones behind it, and a Celery retry resumes the chat
  with backoff (`chat_deliver`).
- Nothing is sent twice: a delivery has a key (the message and its part, or the update it answers)
  unique in its chat, and a delivery is claimed (`claimed_at`) before its call; a claim older than
  CLAIM_SECONDS belonged to a process that died and is taken over.
- A user who blocked the bot (Telegram's 403, VK's errors 901 and 902) marks the chat blocked and
  every delivery waiting for it; no retry. A call refused for good (400) fails alone, and the chat
  goes on.
- Calls are made by the connection's transport (messengers/transports.py): rows keep the method
  and the parameters as the messenger takes them (VK's random_id too, so a retry is the same
  message to VK and never shown twice).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, Final

from celery import Task, shared_task
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from chat.models import Message
from core import secrets
from core.texts import stored
from messengers import services, transports
from messengers.exceptions import BadToken, Blocked, SendFailed
from messengers.models import Connection, Delivery, MessengerChat
from messengers.outgoing import Outgoing, outgoing

logger = logging.getLogger("spravka.messengers")

CLAIM_SECONDS: Final = 60
Status = Delivery.Status


def _calls(connection: Connection, chat_id: str, shown: Outgoing) -> list[tuple[str, dict[str, Any]]]:
    return transports.of(connection.kind).calls(chat_id, shown)


def _make(chat: MessengerChat, key: str, method: str, params: dict[str, Any], message_id: int | None,
          conversation_id: int | None = None) -> None:
    try:
        with transaction.atomic():
            Delivery.objects.create(connection_id=chat.connection_id, chat=chat, key=key, method=method,
                                    params=params, message_id=message_id, conversation_id=conversation_id)
    except IntegrityError:  # made already (an update or a message handled again): never twice
        pass


def deliveries_for_messages(chat: MessengerChat, messages: list[Message]) -> None:
    """The calls that show `messages` (bot, operator and system messages; a visitor's own are not
    sent back), queued for the chat in order."""
    bot = chat.connection.bot
    for message in messages:
        if message.role == Message.Role.VISITOR:
            continue
        for part, (method, params) in enumerate(_calls(chat.connection, chat.chat_id, outgoing(message, bot))):
            _make(chat, f"m:{message.pk}:{part}", method, params, message.pk)


def delivery_for_text(chat: MessengerChat, *, key: str, text: str) -> None:
    """A reply that is not stored as a message (the greeting on /start, an error), queued."""
    for part, (method, params) in enumerate(_calls(chat.connection, chat.chat_id, Outgoing(text=text))):
        _make(chat, f"{key}:{part}", method, params, None)


def delivery_for_operator(chat: MessengerChat, *, key: str, text: str, conversation_id: int,
                          actions: list[tuple[str, str]] | None = None) -> None:
    """A message to an operator's own chat about a conversation (a waiting one, one they took),
    with its buttons; a reply to it there is matched back to the conversation (`conversation_replied`)."""
    shown = Outgoing(text=text, actions=actions or [])
    for part, (method, params) in enumerate(_calls(chat.connection, chat.chat_id, shown)):
        _make(chat, f"{key}:{part}", method, params, None, conversation_id)


def conversation_replied(chat: MessengerChat, sent_message_id: int) -> int | None:
    """The conversation that the message `sent_message_id` of the chat (one sent by
    `delivery_for_operator`) is about, or None."""
    return (Delivery.objects.filter(chat=chat, result_message_id=sent_message_id, conversation__isnull=False)
            .values_list("conversation_id", flat=True).first())


def _claim(delivery: Delivery) -> bool:
    now = timezone.now()
    free = Q(status=Status.PENDING) | Q(status=Status.SENDING, claimed_at__lt=now - timedelta(seconds=CLAIM_SECONDS))
    return bool(Delivery.objects.filter(free, pk=delivery.pk).update(status=Status.SENDING, claimed_at=now))


def retry_delay(attempt: int) -> float:
    """Seconds before retry number `attempt` (1-based): base, 2×base, 4×base…, at most ten minutes."""
    return float(min(settings.MESSENGER_RETRY_BASE * (2 ** (attempt - 1)), 600))


def _finish(delivery: Delivery, status: str, *, error: str = "", response: int | None = None) -> None:
    delivery.status, delivery.error, delivery.response_status = status, error[:500], response
    delivery.delivered_at = timezone.now() if status == Status.DELIVERED else None
    delivery.save(update_fields=["status", "error", "response_status", "delivered_at", "attempts",
                                 "result_message_id"])


def _sent_number(result: Any) -> int | None:
    """The number of the message a call sent (Telegram answers with the Message), else None."""
    number = result.get("message_id") if isinstance(result, dict) else None
    return number if isinstance(number, int) else None


def _blocked(chat: MessengerChat, delivery: Delivery, error: str) -> None:
    services.chat_blocked(chat)  # first: whoever sees the delivery blocked finds the chat so too
    Delivery.objects.filter(chat=chat, status=Status.PENDING).update(status=Status.BLOCKED)
    _finish(delivery, Status.BLOCKED, error=error, response=403)


def _send_one(chat: MessengerChat, token: str, delivery: Delivery) -> float | None:
    """One call; the seconds to wait before the chat goes on, or None to go on now (or stop: blocked)."""
    delivery.attempts += 1
    connection = chat.connection
    transport = transports.of(connection.kind)
    try:
        delivery.result_message_id = _sent_number(transport.call(token, delivery.method, delivery.params))
    except Blocked as exc:
        _blocked(chat, delivery, str(exc))
        return None
    except BadToken as exc:
        _finish(delivery, Status.FAILED, error=str(exc), response=401)
        services.connection_failing(connection, stored(transport.TOKEN_REFUSED))
        return None
    except SendFailed as exc:
        if exc.retryable and delivery.attempts < settings.MESSENGER_MAX_ATTEMPTS:
            _finish(delivery, Status.PENDING, error=str(exc), response=exc.status)
            return exc.retry_after if exc.retry_after is not None else retry_delay(delivery.attempts)
        _finish(delivery, Status.FAILED, error=str(exc), response=exc.status)
        services.connection_failing(connection, stored(gettext_noop(
            "сообщение не доставлено: %(error)s"), error=str(exc)[:200]))
        return 0.0
    _finish(delivery, Status.DELIVERED, response=200)
    services.connection_working(connection)
    return 0.0


def chat_flush(chat_pk: int) -> float | None:
    """Send the chat's waiting deliveries in order. The seconds before the next try when one must
    wait, else None (all sent, failed for good, blocked, or another process is sending)."""
    chat = MessengerChat.objects.select_related("connection").filter(pk=chat_pk).first()
    if chat is None:
        return None
    connection = chat.connection
    if chat.blocked_at is not None or not connection.working:
        status = Status.BLOCKED if chat.blocked_at is not None else Status.FAILED
        Delivery.objects.filter(chat=chat, status=Status.PENDING).update(status=status)
        return None
    try:
        token = services.token_of(connection)
    except secrets.Unreadable:
        services.connection_failing(connection, stored(gettext_noop(
            "токен не расшифровать: ключ изменился — подключите бота заново")))
        return None
    while True:
        delivery = (Delivery.objects.filter(chat=chat, status__in=[Status.PENDING, Status.SENDING])
                    .order_by("id").first())
        if delivery is None:
            return None
        if not _claim(delivery):  # another process sends it: that one goes on after it
            return None
        wait = _send_one(chat, token, delivery)
        if wait is None:
            return None
        if wait > 0:
            return wait


@shared_task(bind=True, max_retries=None)
def chat_deliver(self: Task, chat_pk: int) -> None:
    """Send a chat's waiting deliveries (Celery); resumed after the wait a failed call asks for."""
    wait = chat_flush(chat_pk)
    if wait is not None:
        raise self.retry(countdown=wait)


def deliver_soon(chat: MessengerChat) -> None:
    """Send the chat's deliveries from a worker, after the caller's transaction commits."""
    chat_pk = chat.pk
    transaction.on_commit(lambda: chat_deliver.delay(chat_pk))


def deliver_now(chat: MessengerChat) -> None:
    """Send them from here (a worker already handling the chat's update); a wait goes to Celery."""
    wait = chat_flush(chat.pk)
    if wait is not None:
        chat_deliver.apply_async((chat.pk,), countdown=wait)


def deliveries_retry(queryset: Any) -> int:
    """Failed deliveries queued again (the admin's «Отправить ещё раз»): their chats resume."""
    chats = set(queryset.values_list("chat_id", flat=True))
    count = int(queryset.update(status=Status.PENDING, attempts=0))
    transaction.on_commit(lambda: [chat_deliver.delay(pk) for pk in chats])
    return count
