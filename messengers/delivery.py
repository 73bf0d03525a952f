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
# The key prefix of a change to a message already shown (a notice marked taken): a courtesy, so a
# messenger refusing it (the message deleted, too old to edit) fails that delivery alone and never
# marks the connection failing.
NOTICE_EDIT: Final = "t:"
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


def delivery_for_call(chat: MessengerChat, *, key: str, method: str, params: dict[str, Any]) -> None:
    """One call made elsewhere (a notice's edit), queued for the chat; never twice for one key."""
    _make(chat, key, method, params, None)


def delivery_for_operator(chat: MessengerChat, *, key: str, text: str, conversation_id: int,
                          actions: list[tuple[str, str]] | None = None) -> None:
    """A message to an operator's own chat about a conversation (a waiting one, one they took),
    with its buttons; a reply to it there is matched back to the conversation (`conversation_replied`)."""
    shown = Outgoing(text=text, actions=actions or [])
    for part, (method, params) in enumerate(_calls(chat.connection, chat.chat_id, shown)):
        _make(chat, f"{key}:{part}", method, params, None, conversation_id)


def deliveries_for_operators(chats: list[MessengerChat], *, key: str, text: str, conversation_id: int,
                             actions: list[tuple[str, str]]) -> None:
    """`delivery_for_operator` for many operators' chats at once, in one statement; a chat that has
    it already (the same key) keeps the one it has."""
    shown = Outgoing(text=text, actions=actions)
    Delivery.objects.bulk_create([
        Delivery(connection_id=chat.connection_id, chat=chat, key=f"{key}:{part}", method=method, params=params,
                 conversation_id=conversation_id)
        for chat in chats for part, (method, params) in enumerate(_calls(chat.connection, chat.chat_id, shown))
    ], ignore_conflicts=True)


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
    try:
        result: Any = transports.of(chat.connection.kind).call(token, delivery.method, delivery.params)
    except (Blocked, BadToken, SendFailed) as exc:
        result = exc
    return _settle(chat, delivery, result)


def _settle(chat: MessengerChat, delivery: Delivery, result: Any) -> float | None:
    """A call's outcome written to its delivery (`result` the messenger's answer or our exception);
    the seconds to wait before the chat goes on, 0 to go on now, None to stop (blocked, bad token)."""
    delivery.attempts += 1
    connection = chat.connection
    transport = transports.of(connection.kind)
    if isinstance(result, Blocked):
        _blocked(chat, delivery, str(result))
        return None
    if isinstance(result, BadToken):
        _finish(delivery, Status.FAILED, error=str(result), response=401)
        services.connection_failing(connection, stored(transport.TOKEN_REFUSED))
        return None
    if isinstance(result, SendFailed):
        if result.retryable and delivery.attempts < settings.MESSENGER_MAX_ATTEMPTS:
            _finish(delivery, Status.PENDING, error=str(result), response=result.status)
            return result.retry_after if result.retry_after is not None else retry_delay(delivery.attempts)
        _finish(delivery, Status.FAILED, error=str(result), response=result.status)
        if not delivery.key.startswith(NOTICE_EDIT):
            services.connection_failing(connection, stored(gettext_noop(
                "сообщение не доставлено: %(error)s"), error=str(result)[:200]))
        return 0.0
    delivery.result_message_id = _sent_number(result)
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


def chats_flush_together(chat_pks: list[int]) -> dict[int, float]:
    """Send the first waiting delivery of each chat at once, the calls of one connection together
    (one client, concurrent requests: `transport.call_many`), for news that many chats get at the
    same moment (a conversation waiting, told to every linked operator). A chat with more to send, or
    whose call must wait, goes on alone as `chat_flush` does: {chat pk: seconds to wait first}."""
    chats = {chat.pk: chat for chat in MessengerChat.objects.select_related("connection").filter(pk__in=chat_pks)}
    by_connection: dict[int, list[Delivery]] = {}
    later: dict[int, float] = {}
    for delivery in _first_waiting(list(chats)):
        chat = chats[delivery.chat_id]
        if chat.blocked_at is not None or not chat.connection.working:
            later[chat.pk] = 0.0  # chat_flush settles it (blocked or failed), as for one chat
        elif _claim(delivery):
            by_connection.setdefault(chat.connection_id, []).append(delivery)
    for deliveries in by_connection.values():
        later |= _send_together(chats, deliveries)
    return later


def _first_waiting(chat_pks: list[int]) -> list[Delivery]:
    """Each chat's oldest delivery not yet sent: the only one that may leave now (order per chat)."""
    firsts = (Delivery.objects.filter(chat_id__in=chat_pks, status__in=[Status.PENDING, Status.SENDING])
              .order_by("chat_id", "id").distinct("chat_id").values_list("pk", flat=True))
    return list(Delivery.objects.filter(pk__in=list(firsts)))


def _send_together(chats: dict[int, MessengerChat], deliveries: list[Delivery]) -> dict[int, float]:
    connection = chats[deliveries[0].chat_id].connection
    try:
        token = services.token_of(connection)
    except secrets.Unreadable:
        Delivery.objects.filter(pk__in=[d.pk for d in deliveries]).update(status=Status.PENDING)
        return {d.chat_id: 0.0 for d in deliveries}  # chat_flush tells the owner, once per chat
    results = transports.of(connection.kind).call_many(token, [(d.method, d.params) for d in deliveries])
    later: dict[int, float] = {}
    sent = [(d, r) for d, r in zip(deliveries, results, strict=True) if not isinstance(r, Exception)]
    _delivered_together(connection, sent)
    for delivery, result in zip(deliveries, results, strict=True):
        if isinstance(result, Exception):
            wait = _settle(chats[delivery.chat_id], delivery, result)
            if wait is not None:
                later[delivery.chat_id] = wait
    more = set(Delivery.objects.filter(chat_id__in=[d.chat_id for d in deliveries], status=Status.PENDING)
               .values_list("chat_id", flat=True))
    return {chat_pk: later.get(chat_pk, 0.0) for chat_pk in more} | {pk: w for pk, w in later.items() if w > 0}


def _delivered_together(connection: Connection, sent: list[tuple[Delivery, Any]]) -> None:
    """The calls that went through, written as `_settle` writes one, in one statement."""
    if not sent:
        return
    now = timezone.now()
    for delivery, result in sent:
        delivery.attempts += 1
        delivery.status, delivery.error, delivery.response_status, delivery.delivered_at = (
            Status.DELIVERED, "", 200, now)
        delivery.result_message_id = _sent_number(result)
    Delivery.objects.bulk_update([delivery for delivery, _result in sent], [
        "status", "error", "response_status", "delivered_at", "attempts", "result_message_id"])
    services.connection_working(connection)


@shared_task(max_retries=None)
def chats_deliver(chat_pks: list[int]) -> None:
    """Send many chats' news together (Celery); each chat with more to send, or a wait, goes on in
    `chat_deliver`."""
    for chat_pk, wait in chats_flush_together(chat_pks).items():
        if wait > 0:
            chat_deliver.apply_async((chat_pk,), countdown=wait)
        else:
            chat_deliver.delay(chat_pk)


def deliver_together_soon(chats: list[MessengerChat]) -> None:
    """Send these chats' deliveries from one worker task, after the caller's transaction commits."""
    chat_pks = [chat.pk for chat in chats]
    transaction.on_commit(lambda: chats_deliver.delay(chat_pks))


def deliveries_retry(queryset: Any) -> int:
    """Failed deliveries queued again (the admin's «Отправить ещё раз»): their chats resume."""
    chats = set(queryset.values_list("chat_id", flat=True))
    count = int(queryset.update(status=Status.PENDING, attempts=0))
    transaction.on_commit(lambda: [chat_deliver.delay(pk) for pk in chats])
    return count
