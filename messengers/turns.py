"""A messenger update's way: received (checked, stored once, acknowledged), then handled by a
worker through the same conversation and answer services the widget uses, the reply sent back as
deliveries. The one module that writes an `InboundUpdate`.

What must stay true:
- A forged update (no or wrong secret) is refused before anything is read or stored; a body that
  is not an update gets 400; an update for a disconnected bot is acknowledged and ignored.
- An update is handled once: stored under its update id (a resend finds it), the visitor's message
  under «<update>» as client_msg_id (handled again, it finds its stored answer), the calls under
  keys (messengers/delivery.py): none is answered twice.
- One chat's updates are handled one at a time, in update order (`chat_updates_run`): a
  visitor's second message is never answered before their first, however many workers run.
- The chain is the widget's: rules, search, model, checks (chat/services.py → answers/).
"""

from __future__ import annotations

import hmac
import json
import logging

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from answers import replies
from chat import leads
from chat import services as chat_services
from chat.exceptions import ChatError, HandoffUnavailable, LeadUnavailable, RateLimited
from chat.frames import LeadForm
from chat.models import Conversation, Message
from messengers import delivery, services, telegram
from messengers.exceptions import BadUpdate
from messengers.incoming import Incoming
from messengers.models import Connection, InboundUpdate, MessengerChat

logger = logging.getLogger("spravka.messengers")

BUTTON_REASON = "button"


class Forged(Exception):
    """The update does not carry this connection's secret."""


class UnknownAddress(Exception):
    """No connection has this webhook address."""


class TooLarge(Exception):
    pass


def update_receive(*, kind: str, key: str, secret: str, body: bytes) -> InboundUpdate | None:
    """Check and store one update; the stored row (handled by a worker after commit), or None when
    it is acknowledged without handling (a resend, a disconnected bot, an update Spravka ignores)."""
    connection = Connection.objects.filter(webhook_key=key, kind=kind).first()
    if connection is None:
        raise UnknownAddress()
    if not secret or not hmac.compare_digest(secret.encode(), connection.secret.encode()):
        raise Forged()
    if len(body) > settings.MESSENGER_MAX_BODY:
        raise TooLarge()
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadUpdate("not JSON") from exc
    read = telegram.incoming(payload)  # BadUpdate for what is not an update
    if not connection.working or read is None:
        return None
    chat = services.chat_remember(connection=connection, chat_id=read.chat_id, name=read.name,
                                  username=read.username)
    try:
        with transaction.atomic():
            update = InboundUpdate.objects.create(connection=connection, chat=chat, update_id=read.update_id,
                                                  payload=payload)
    except IntegrityError:  # Telegram sent it again: it is handled (or being handled) already
        return None
    chat_pk = chat.pk
    transaction.on_commit(lambda: update_handle.delay(chat_pk))
    return update


@shared_task
def update_handle(chat_pk: int) -> None:
    """Handle a chat's waiting updates (Celery)."""
    chat_updates_run(chat_pk)


def chat_updates_run(chat_pk: int) -> None:
    """Handle the chat's waiting updates one at a time, in update order, so a visitor's second
    message is never answered before their first. A worker that finds another one at it leaves the
    updates to it; the one at it looks again after letting go, so none is left behind."""
    while services.chat_claim(chat_pk):
        try:
            while (update := _next_update(chat_pk)) is not None:
                _run(update)
        finally:
            services.chat_release(chat_pk)
        if _next_update(chat_pk) is None:
            return


def _next_update(chat_pk: int) -> InboundUpdate | None:
    return (InboundUpdate.objects.select_related("connection__bot", "chat")
            .filter(chat_id=chat_pk, status=InboundUpdate.Status.RECEIVED).order_by("update_id").first())


def _run(update: InboundUpdate) -> None:
    connection = update.connection
    read = telegram.incoming(update.payload)
    status: str = InboundUpdate.Status.IGNORED
    if connection.working and read is not None and update.chat is not None:
        try:
            status = _handle(connection, update.chat, read)
        except Exception:
            logger.exception("update %s of connection %s failed", update.update_id, connection.pk)
            status = InboundUpdate.Status.FAILED
    update.status, update.handled_at = status, timezone.now()
    update.save(update_fields=["status", "handled_at"])


def _handle(connection: Connection, chat: MessengerChat, read: Incoming) -> str:
    if read.kind == "membership":
        services.chat_blocked(chat, blocked=read.blocked)
        return InboundUpdate.Status.HANDLED
    conversation = chat_services.conversation_open(
        bot=connection.bot, visitor_id=services.visitor_id(connection, read.chat_id),
        channel=connection.kind, visitor_name=read.name or read.username,
    )
    try:
        shown = _turn(connection, chat, conversation, read)
    except RateLimited:  # a flood from one chat: dropped, as the widget drops it (no reply to amplify)
        logger.info("chat %s of connection %s is over its limit", read.chat_id, connection.pk)
        return InboundUpdate.Status.IGNORED
    except ChatError as exc:  # said to the visitor in their words (too long, closed…)
        delivery.delivery_for_text(chat, key=f"u:{read.update_id}",
                                   text=exc.message_in(replies.bot_language(connection.bot)))
        shown = []
    delivery.deliveries_for_messages(chat, shown)
    delivery.deliver_now(chat)
    return InboundUpdate.Status.HANDLED


def _turn(connection: Connection, chat: MessengerChat, conversation: Conversation, read: Incoming) -> list[Message]:
    """What the visitor should be shown for this update (stored messages); greetings and button
    acknowledgements that are not stored are queued or sent here."""
    bot = connection.bot
    client_msg_id = f"{read.update_id}"
    if read.kind == "start":
        delivery.delivery_for_text(chat, key=f"u:{read.update_id}", text=replies.say(bot, "greeting"))
        return []
    if read.kind == "not_text":
        return chat_services.message_not_text(conversation=conversation, what=read.what, client_msg_id=client_msg_id)
    if read.kind == "button":
        telegram.button_answered(services.token_of(connection), read.query_id)
        if read.data != telegram.OPERATOR_DATA:
            return []
        try:
            return chat_services.conversation_handoff(conversation=conversation, reason=BUTTON_REASON)
        except HandoffUnavailable as exc:
            delivery.delivery_for_text(chat, key=f"u:{read.update_id}", text=exc.message)
            return []
    if read.kind == "contact":
        return _contact(conversation, read)
    return _question(connection, conversation, read, client_msg_id)


def _question(connection: Connection, conversation: Conversation, read: Incoming, client_msg_id: str) -> list[Message]:
    taken = chat_services.message_take(conversation=conversation, text=read.text, client_msg_id=client_msg_id,
                                       count=True)
    if taken.produced is not None:  # the rules answered, or the bot is silent for a person
        return taken.produced
    if taken.message.flag("to_operator"):
        return chat_services.message_answer(visitor_message=taken.message)
    telegram.typing(services.token_of(connection), read.chat_id)
    return chat_services.message_answer(visitor_message=taken.message, just_stored=taken.created,
                                        reading=taken.reading)


def _contact(conversation: Conversation, read: Incoming) -> list[Message]:
    """The visitor shared their phone with Telegram's button, under the consent text it showed."""
    form = LeadForm(name=read.name or read.username or "Telegram", phone=read.phone, email="", question="",
                    consent=True)
    try:
        _lead, notes = leads.lead_submit(conversation=conversation, form=form)
    except LeadUnavailable:
        return []
    return notes
