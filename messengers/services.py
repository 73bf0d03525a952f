"""Connecting a bot to a messenger and the chats that write to it: the one module that writes a
`Connection` or a `MessengerChat`. The owner's channels page, `manage.py channel` and the admin call
these.

What must stay true:
- A token is checked with the messenger before anything is saved for it (Telegram's getMe, VK's
  groups.getById, MAX's GET /me), and stored sealed (core/secrets.py); the owner sees only its last
  four characters again.
- The webhook's address and secret are saved before the messenger is told about them: an update
  that arrives at once is already recognised.
- Disconnecting forgets the token; updates that still arrive are acknowledged and ignored.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from typing import Final

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from bots.models import Bot
from core import secrets
from core.texts import Stored, russian, stored, stored_pair
from messengers import max_bot, telegram, transports, vk
from messengers.exceptions import BadToken, Blocked, MessengerError, SendFailed
from messengers.models import Connection, MessengerChat, new_secret

logger = logging.getLogger("spravka.messengers")

TOKEN_PURPOSE: Final = b"spravka-messenger-token"
TELEGRAM_TOKEN: Final = re.compile(r"^[0-9]{3,20}:[A-Za-z0-9_-]{20,100}$")
VK_TOKEN: Final = re.compile(r"^[A-Za-z0-9._-]{40,512}$")  # vk1.a.… now, 85 hex characters before
VK_CONFIRMATION: Final = re.compile(r"^[A-Za-z0-9]{4,64}$")  # 8 hex characters, as VK shows it
VK_SECRET: Final = re.compile(r"^[A-Za-z0-9_-]{8,50}$")
MAX_TOKEN: Final = re.compile(r"^[A-Za-z0-9._~+/=:-]{20,512}$")  # MAX says nothing of its form: no spaces, no markup
VISITOR_PREFIX: Final = {Connection.Kind.TELEGRAM: "tg", Connection.Kind.VK: "vk", Connection.Kind.MAX: "max"}


class ConnectFailed(Exception):
    """Connecting did not work; `message` says why in words the owner understands (stored text)."""

    def __init__(self, message: Stored) -> None:
        super().__init__(russian(message))
        self.stored = message


def token_of(connection: Connection) -> str:
    return secrets.unseal(connection.token_sealed, purpose=TOKEN_PURPOSE)


def webhook_url(connection: Connection) -> str:
    path = reverse(f"messengers:{connection.kind}", kwargs={"key": connection.webhook_key})
    return f"{settings.SPRAVKA_PUBLIC_URL}{path}"


def _hint(token: str) -> str:
    return f"…{token[-4:]}"


def telegram_connect(*, bot: Bot, token: str) -> Connection:
    """Check the token with Telegram (getMe), save it sealed, set the webhook. ConnectFailed says
    what to fix; a failure after saving leaves the connection marked with its error."""
    token = (token or "").strip()
    if not TELEGRAM_TOKEN.fullmatch(token):
        raise ConnectFailed(stored(gettext_noop(
            "Это не похоже на токен Telegram: он выглядит как 123456789:AAE… — скопируйте его из @BotFather целиком.")))
    try:
        account_id, username = telegram.account(token)
    except BadToken as exc:
        raise ConnectFailed(stored(gettext_noop(
            "Telegram не знает этот токен. Проверьте его в @BotFather (команда /token)."))) from exc
    except (SendFailed, Blocked) as exc:
        raise ConnectFailed(stored(gettext_noop(
            "Telegram не ответил: %(error)s. Попробуйте ещё раз через минуту."), error=str(exc)[:200])) from exc
    connection = _connection_save(bot=bot, kind=Connection.Kind.TELEGRAM, token=token, account_id=account_id,
                                  name=username, secret=new_secret())
    try:
        telegram.webhook_set(token, url=connection.webhook_url, secret=connection.secret)
    except MessengerError as exc:
        error = stored(gettext_noop("Telegram не принял адрес %(url)s: %(error)s"), url=connection.webhook_url,
                       error=str(exc)[:200])
        connection_failing(connection, error)
        raise ConnectFailed(error) from exc
    return connection


def vk_connect(*, bot: Bot, token: str, confirmation: str, secret: str) -> Connection:
    """Check a community's token with VK (groups.getById), save it sealed with the Callback API's
    confirmation string and secret the owner copied from the community's settings. ConnectFailed
    says what to fix. The webhook's address (`webhook_url`) is then pasted into those settings:
    VK checks it with the confirmation handshake, answered from what is saved here."""
    token, confirmation, secret = (token or "").strip(), (confirmation or "").strip(), (secret or "").strip()
    if not VK_TOKEN.fullmatch(token):
        raise ConnectFailed(stored(gettext_noop(
            "Это не похоже на ключ доступа сообщества ВКонтакте: создайте его в «Управление → Работа с API → "
            "Ключи доступа» (с доступом к сообщениям) и скопируйте целиком.")))
    if not VK_CONFIRMATION.fullmatch(confirmation):
        raise ConnectFailed(stored(gettext_noop(
            "Нужна строка, которую должен вернуть сервер: она показана в «Управление → Работа с API → Callback "
            "API», например 1a2b3c4d.")))
    if not VK_SECRET.fullmatch(secret):
        raise ConnectFailed(stored(gettext_noop(
            "Секретный ключ: от 8 до 50 латинских букв и цифр. Придумайте его и впишите в настройках Callback API "
            "сообщества и здесь.")))
    try:
        account_id, name = vk.community(token)
    except BadToken as exc:
        raise ConnectFailed(stored(gettext_noop(
            "ВКонтакте не знает этот ключ доступа. Проверьте его в «Управление → Работа с API → Ключи доступа».")
        )) from exc
    except SendFailed as exc:
        if exc.retryable:
            raise ConnectFailed(stored(gettext_noop(
                "ВКонтакте не ответил: %(error)s. Попробуйте ещё раз через минуту."), error=str(exc)[:200])) from exc
        raise ConnectFailed(stored(gettext_noop(
            "Это не ключ сообщества (%(error)s): нужен ключ из «Управление → Работа с API» самого сообщества."),
            error=str(exc)[:200])) from exc
    except Blocked as exc:  # not said of groups.getById: counted as VK not answering
        raise ConnectFailed(stored(gettext_noop(
            "ВКонтакте не ответил: %(error)s. Попробуйте ещё раз через минуту."), error=str(exc)[:200])) from exc
    return _connection_save(bot=bot, kind=Connection.Kind.VK, token=token, account_id=account_id, name=name,
                            secret=secret, confirmation=confirmation)


def max_connect(*, bot: Bot, token: str) -> Connection:
    """Check the token with MAX (GET /me), save it sealed, subscribe the webhook with a secret of
    its own (POST /subscriptions). ConnectFailed says what to fix; a failure after saving leaves the
    connection marked with its error."""
    token = (token or "").strip()
    if not MAX_TOKEN.fullmatch(token):
        raise ConnectFailed(stored(gettext_noop(
            "Это не похоже на токен MAX: скопируйте его целиком на платформе MAX для партнёров "
            "(business.max.ru): «Чат-боты» → ⋮ → «Настройки».")))
    try:
        account_id, name = max_bot.account(token)
    except BadToken as exc:
        raise ConnectFailed(stored(gettext_noop(
            "MAX не знает этот токен. Скопируйте его заново на business.max.ru: «Чат-боты» → ⋮ → «Настройки»."
        ))) from exc
    except (SendFailed, Blocked) as exc:
        raise ConnectFailed(stored(gettext_noop(
            "MAX не ответил: %(error)s. Попробуйте ещё раз через минуту."), error=str(exc)[:200])) from exc
    connection = _connection_save(bot=bot, kind=Connection.Kind.MAX, token=token, account_id=account_id, name=name,
                                  secret=new_secret())
    try:
        max_bot.webhook_set(token, url=connection.webhook_url, secret=connection.secret)
    except MessengerError as exc:
        error = stored(gettext_noop("MAX не принял адрес %(url)s: %(error)s"), url=connection.webhook_url,
                       error=str(exc)[:200])
        connection_failing(connection, error)
        raise ConnectFailed(error) from exc
    return connection


def _connection_save(*, bot: Bot, kind: str, token: str, account_id: str, name: str, secret: str,
                     confirmation: str = "") -> Connection:
    """The bot's connection to `kind` (made or taken over), with a checked token sealed, working
    again from now. A new token gets a new secret: updates signed with the old one are refused."""
    with transaction.atomic():
        connection, _created = Connection.objects.select_for_update().get_or_create(bot=bot, kind=kind)
        connection.token_sealed = secrets.seal(token, purpose=TOKEN_PURPOSE)
        connection.token_hint, connection.account_id, connection.account_name = _hint(token), account_id, name
        connection.secret, connection.confirmation = secret, confirmation
        connection.status, connection.connected_at = Connection.Status.ACTIVE, timezone.now()
        connection.last_error, connection.last_error_stored, connection.last_error_at = "", None, None
        connection.webhook_url = webhook_url(connection)
        connection.save()
    return connection


def connection_disconnect(*, connection: Connection) -> Connection:
    """Stop the webhook (if the messenger still answers and can be told) and forget the token."""
    token = ""
    try:
        token = token_of(connection)
    except secrets.Unreadable:
        logger.warning("the token of connection %s is unreadable: disconnected without telling the messenger",
                       connection.pk)
    if token:
        try:
            transports.of(connection.kind).forget(token, connection.webhook_url)
        except MessengerError as exc:  # the token was revoked, the messenger is away: forget it anyway
            logger.info("stopping the updates of connection %s failed: %s", connection.pk, exc)
    connection.status, connection.token_sealed = Connection.Status.DISCONNECTED, ""
    connection.save(update_fields=["status", "token_sealed", "updated_at"])
    return connection


def connection_failing(connection: Connection, error: Stored) -> None:
    """A call that the owner should hear about failed: the status and the last error show it."""
    connection.last_error, connection.last_error_stored = stored_pair(error, 500)
    connection.last_error_at = timezone.now()
    if connection.status != Connection.Status.DISCONNECTED:
        connection.status = Connection.Status.FAILING
    connection.save(update_fields=["last_error", "last_error_stored", "last_error_at", "status", "updated_at"])


def connection_working(connection: Connection) -> None:
    """A call went through after failures: the connection is healthy again (the last error stays
    to be read)."""
    if connection.status == Connection.Status.FAILING:
        connection.status = Connection.Status.ACTIVE
        connection.save(update_fields=["status", "updated_at"])


def chat_remember(*, connection: Connection, chat_id: str, name: str, username: str) -> MessengerChat:
    """The person writing from `chat_id`, their name as the messenger shows it now. Writing again
    after blocking the bot unblocks it."""
    chat, created = MessengerChat.objects.get_or_create(
        connection=connection, chat_id=chat_id, defaults={"name": name[:200], "username": username[:64]})
    # A name the update does not carry (VK's carry none) keeps the one known.
    changed = {"name": name[:200] or chat.name, "username": username[:64] or chat.username, "blocked_at": None}
    changed = {field: value for field, value in changed.items() if getattr(chat, field) != value}
    if not created and changed:
        for field, value in changed.items():
            setattr(chat, field, value)
        chat.save(update_fields=list(changed))
    return chat


HANDLING_SECONDS: Final = 180  # a claim older than this belonged to a worker that died


def chat_claim(chat_pk: int) -> bool:
    """Take the chat's turn to handle its updates; False while another worker has it."""
    now = timezone.now()
    free = Q(handling_since__isnull=True) | Q(handling_since__lt=now - timedelta(seconds=HANDLING_SECONDS))
    return bool(MessengerChat.objects.filter(free, pk=chat_pk).update(handling_since=now))


def chat_release(chat_pk: int) -> None:
    MessengerChat.objects.filter(pk=chat_pk).update(handling_since=None)


def chat_blocked(chat: MessengerChat, *, blocked: bool = True) -> None:
    chat.blocked_at = timezone.now() if blocked else None
    chat.save(update_fields=["blocked_at"])


def visitor_id(connection: Connection, chat_id: str) -> str:
    """The conversation's visitor: one conversation per bot × channel × chat."""
    return f"{VISITOR_PREFIX[Connection.Kind(connection.kind)]}:{chat_id}"


def chat_of_visitor(*, bot_id: int, kind: str, visitor: str) -> MessengerChat | None:
    prefix, _, chat_id = visitor.partition(":")
    if not chat_id or VISITOR_PREFIX.get(Connection.Kind(kind)) != prefix:
        return None
    return (MessengerChat.objects.select_related("connection")
            .filter(connection__bot_id=bot_id, connection__kind=kind, chat_id=chat_id).first())
