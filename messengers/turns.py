"""A messenger update's way: received (checked, stored once, acknowledged), then handled by a
worker through the same conversation and answer services the widget uses, the reply sent back as
deliveries. The one module that writes an `InboundUpdate`.

What must stay true:
- A forged update (no or wrong secret) is refused before it is stored (Telegram's and MAX's secret
  comes in a header and is checked before the body is read; VK's is in the body, parsed first); a body that
  is not an update gets 400; an update for a disconnected bot is acknowledged and ignored.
- An update is handled once: stored under its event id (a resend finds it), the visitor's message
  under «<event>» as client_msg_id (handled again, it finds its stored answer), the calls under
  keys (messengers/delivery.py): none is answered twice.
- One chat's updates are handled one at a time, in arrival order (`chat_updates_run`): a
  visitor's second message is never answered before their first, however many workers run.
- VK's handshake is answered with the connection's confirmation string and never stored.
- The chain is the widget's: rules, search, model, checks (chat/services.py → answers/). Nothing
  here names a messenger: each one's transport (messengers/transports.py) reads and writes.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from dataclasses import dataclass
from typing import Final

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from answers import replies
from answers.replies import LEAD_BUTTON_ID
from chat import leads
from chat import services as chat_services
from chat.exceptions import ChatError, HandoffUnavailable, LeadUnavailable, RateLimited
from chat.frames import LeadForm
from chat.models import Conversation, Message
from messengers import delivery, operators, services, transports
from messengers.exceptions import BadUpdate
from messengers.incoming import OPERATOR, Incoming
from messengers.models import Connection, InboundUpdate, MessengerChat

logger = logging.getLogger("spravka.messengers")

BUTTON_REASON = "button"
PHONE: Final = re.compile(r"\+?[\d\s().-]{7,24}")  # a phone typed where no button shares it (VK)
PHONE_DIGITS: Final = range(10, 16)


class Forged(Exception):
    """The update does not carry this connection's secret."""


class UnknownAddress(Exception):
    """No connection has this webhook address."""


class TooLarge(Exception):
    pass


@dataclass(frozen=True)
class Received:
    """What the webhook answers: the stored update (handled by a worker after commit) or None when
    it is acknowledged without handling (a resend, a disconnected bot, an update Spravka ignores);
    `confirmation` is what VK's handshake must read back."""

    update: InboundUpdate | None = None
    confirmation: str = ""


def _check(connection: Connection, secret: str) -> None:
    if not secret or not hmac.compare_digest(secret.encode(), connection.secret.encode()):
        raise Forged()


def update_receive(*, kind: str, key: str, secret: str | None, body: bytes) -> Received:
    """Check and store one update. `secret` is the one the request carried outside its body
    (Telegram's and MAX's header), or None when the messenger sends it in the body (VK)."""
    connection = Connection.objects.filter(webhook_key=key, kind=kind).first()
    if connection is None:
        raise UnknownAddress()
    if secret is not None:
        _check(connection, secret)
    if len(body) > settings.MESSENGER_MAX_BODY:
        raise TooLarge()
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadUpdate("not JSON") from exc
    transport = transports.of(kind)
    if secret is None:
        _check(connection, transport.secret_in(payload))
    account = transport.account_in(payload)
    if account and connection.account_id and account != connection.account_id:
        raise BadUpdate(f"the update is for {account}, this address belongs to {connection.account_id}")
    read = transport.incoming(payload)  # BadUpdate for what is not an update
    if not connection.working or read is None:
        return Received()
    if read.kind == "confirmation":
        return Received(confirmation=connection.confirmation)
    if isinstance(payload, dict):
        payload.pop("secret", None)  # kept with the connection, not with every update
    chat = services.chat_remember(connection=connection, chat_id=read.chat_id, name=read.name,
                                  username=read.username)
    try:
        with transaction.atomic():
            update = InboundUpdate.objects.create(connection=connection, chat=chat, event_id=read.event_id,
                                                  update_id=read.update_id, payload=payload)
    except IntegrityError:  # the messenger sent it again: it is handled (or being handled) already
        return Received()
    chat_pk = chat.pk
    transaction.on_commit(lambda: update_handle.delay(chat_pk))
    return Received(update=update)


@shared_task
def update_handle(chat_pk: int) -> None:
    """Handle a chat's waiting updates (Celery)."""
    chat_updates_run(chat_pk)


def chat_updates_run(chat_pk: int) -> None:
    """Handle the chat's waiting updates one at a time, in arrival order, so a visitor's second
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
            .filter(chat_id=chat_pk, status=InboundUpdate.Status.RECEIVED).order_by("id").first())


def _run(update: InboundUpdate) -> None:
    connection = update.connection
    read = transports.of(connection.kind).incoming(update.payload)
    status: str = InboundUpdate.Status.IGNORED
    if connection.working and read is not None and read.kind != "confirmation" and update.chat is not None:
        try:
            status = _handle(connection, update.chat, read)
        except Exception:
            logger.exception("update %s of connection %s failed", update.event_id, connection.pk)
            status = InboundUpdate.Status.FAILED
    update.status, update.handled_at = status, timezone.now()
    update.save(update_fields=["status", "handled_at"])


def _who(connection: Connection, read: Incoming) -> tuple[str, str]:
    """The user's name and username: as the update says, else as known, else asked once (VK)."""
    if read.name or read.username:
        return read.name, read.username
    known = (MessengerChat.objects.filter(connection=connection, chat_id=read.chat_id)
             .values_list("name", "username").first())
    if known is not None and (known[0] or known[1]):
        return known
    return transports.of(connection.kind).profile(services.token_of(connection), read.chat_id)


def _handle(connection: Connection, chat: MessengerChat, read: Incoming) -> str:
    name, username = _who(connection, read)
    chat = services.chat_remember(connection=connection, chat_id=read.chat_id, name=name, username=username)
    if read.kind == "membership":
        services.chat_blocked(chat, blocked=read.blocked)
        return InboundUpdate.Status.HANDLED
    if operators.update_handle(connection, chat, read):  # an operator's chat: never a visitor's
        delivery.deliver_now(chat)
        return InboundUpdate.Status.HANDLED
    conversation = chat_services.conversation_open(
        bot=connection.bot, visitor_id=services.visitor_id(connection, read.chat_id),
        channel=connection.kind, visitor_name=name or username,
    )
    try:
        shown = _turn(connection, chat, conversation, read)
    except RateLimited:  # a flood from one chat: dropped, as the widget drops it (no reply to amplify)
        logger.info("chat %s of connection %s is over its limit", read.chat_id, connection.pk)
        return InboundUpdate.Status.IGNORED
    except ChatError as exc:  # said to the visitor in their words (too long, closed…)
        delivery.delivery_for_text(chat, key=f"u:{read.event_id}",
                                   text=exc.message_in(replies.bot_language(connection.bot)))
        shown = []
    delivery.deliveries_for_messages(chat, shown)
    delivery.deliver_now(chat)
    return InboundUpdate.Status.HANDLED


def _turn(connection: Connection, chat: MessengerChat, conversation: Conversation, read: Incoming) -> list[Message]:
    """What the visitor should be shown for this update (stored messages); greetings and button
    acknowledgements that are not stored are queued or sent here."""
    bot = connection.bot
    transport = transports.of(connection.kind)
    client_msg_id = f"{read.event_id}"
    if read.kind == "start":
        delivery.delivery_for_text(chat, key=f"u:{read.event_id}", text=replies.say(bot, "greeting"))
        return []
    if read.kind == "not_text":
        return chat_services.message_not_text(conversation=conversation, what=read.what, client_msg_id=client_msg_id)
    if read.kind == "button":
        transport.button_answered(services.token_of(connection), read)
        if read.data != OPERATOR:
            return []
        try:
            return chat_services.conversation_handoff(conversation=conversation, reason=BUTTON_REASON)
        except HandoffUnavailable as exc:
            delivery.delivery_for_text(chat, key=f"u:{read.event_id}", text=exc.message)
            return []
    if read.kind == "contact":
        return _contact(connection, conversation, chat, read.phone)
    phone = _typed_phone(read.text)
    if phone and _contact_asked(conversation):
        return _contact(connection, conversation, chat, phone)
    return _question(connection, conversation, read, client_msg_id)


def _question(connection: Connection, conversation: Conversation, read: Incoming, client_msg_id: str) -> list[Message]:
    taken = chat_services.message_take(conversation=conversation, text=read.text, client_msg_id=client_msg_id,
                                       count=True)
    if taken.produced is not None:  # the rules answered, or the bot is silent for a person
        return taken.produced
    if taken.message.flag("to_operator"):
        return chat_services.message_answer(visitor_message=taken.message)
    transports.of(connection.kind).typing(services.token_of(connection), read.chat_id)
    return chat_services.message_answer(visitor_message=taken.message, just_stored=taken.created,
                                        reading=taken.reading)


def _typed_phone(text: str) -> str:
    """`text` when it is a phone number and nothing else (10 to 15 digits), else ""."""
    text = text.strip()
    if not PHONE.fullmatch(text) or sum(char.isdigit() for char in text) not in PHONE_DIGITS:
        return ""
    return text


def _contact_asked(conversation: Conversation) -> bool:
    """The last thing the visitor was shown offered to leave a contact (with its consent): a phone
    typed now answers it."""
    last = (Message.objects.filter(conversation=conversation).exclude(role=Message.Role.VISITOR)
            .order_by("-id").only("buttons").first())
    return last is not None and any(str(button.get("id")) == LEAD_BUTTON_ID for button in last.buttons or [])


def _contact(connection: Connection, conversation: Conversation, chat: MessengerChat, phone: str) -> list[Message]:
    """The visitor gave their phone under the consent text that asked for it: shared with Telegram's
    button, or typed in reply (VK)."""
    name = chat.name or chat.username or str(connection.get_kind_display())
    form = LeadForm(name=name, phone=phone, email="", question="", consent=True)
    try:
        _lead, notes = leads.lead_submit(conversation=conversation, form=form)
    except LeadUnavailable:
        return []
    return notes
