"""A bot's messenger connections, the updates they brought and the calls made back.

What must stay true:
- A bot has at most one connection per messenger; its token is stored sealed (core/secrets.py) and
  only its last four characters are ever shown again.
- An update is stored once per connection and event id (Telegram's update_id, VK's event_id, as
  text): the messenger resending it (our answer was slow, the network dropped it) is acknowledged
  and never answered twice.
- Every call to a messenger that a visitor should see is a `Delivery` row with its attempts, like
  the owner's webhooks: what failed can be read and retried.
- A chat whose user blocked the bot is marked (`MessengerChat.blocked_at`): nothing is sent to it,
  and nothing retried, until they write again.
- An operator's Telegram chat (`OperatorLink`) is never a visitor's: its updates are the operator's
  actions (messengers/operators.py), and it is linked only with a one-time code the operator got
  in the inbox (`OperatorLinkCode`: unused, younger than CODE_MINUTES, for a bot they work in).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot
from chat.models import Conversation
from core.texts import shown


def new_webhook_key() -> str:
    return secrets.token_urlsafe(24)


def new_code() -> str:
    """A one-time linking code: 8 characters a Telegram deep link carries as they are."""
    return secrets.token_urlsafe(6)


def new_secret() -> str:
    """Telegram's secret_token: 1–256 characters of A-Z, a-z, 0-9, «_» and «-». (VK's secret is
    the one the owner typed in the community's Callback API settings.)"""
    return secrets.token_urlsafe(32)


class Connection(models.Model):
    class Kind(models.TextChoices):
        TELEGRAM = "telegram", "Telegram"
        VK = "vk", _("ВКонтакте")
        MAX = "max", "MAX"

    class Status(models.TextChoices):
        ACTIVE = "active", _("подключён")
        FAILING = "failing", _("ошибка доставки")
        DISCONNECTED = "disconnected", _("отключён")

    bot = models.ForeignKey(
        Bot, on_delete=models.CASCADE, related_name="messenger_connections", verbose_name=_("бот")
    )
    kind = models.CharField(_("мессенджер"), max_length=16, choices=Kind.choices)
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.ACTIVE)
    token_sealed = models.TextField(_("токен (зашифрован)"), blank=True, editable=False)
    token_hint = models.CharField(_("токен"), max_length=16, blank=True, help_text=_("Последние знаки токена."))
    account_id = models.CharField(_("номер бота в мессенджере"), max_length=64, blank=True)
    account_name = models.CharField(_("имя бота в мессенджере"), max_length=200, blank=True)
    webhook_key = models.CharField(_("ключ адреса"), max_length=64, unique=True, default=new_webhook_key,
                                   editable=False)
    secret = models.CharField(_("секрет обновлений"), max_length=64, default=new_secret, editable=False)
    # VK: the string the Callback API's handshake must read back to confirm the address.
    confirmation = models.CharField(_("строка подтверждения адреса"), max_length=64, blank=True)
    webhook_url = models.CharField(_("адрес для обновлений"), max_length=500, blank=True)
    last_error = models.CharField(_("последняя ошибка"), max_length=500, blank=True)
    last_error_stored = models.JSONField(_("ошибка для перевода"), null=True, blank=True, editable=False)
    last_error_at = models.DateTimeField(_("когда"), null=True, blank=True)
    connected_at = models.DateTimeField(_("подключён"), null=True, blank=True)
    updated_at = models.DateTimeField(_("изменён"), auto_now=True)

    class Meta:
        verbose_name = _("подключение мессенджера")
        verbose_name_plural = _("подключения мессенджеров")
        ordering = ["bot_id", "kind"]
        constraints = [models.UniqueConstraint(fields=["bot", "kind"], name="messenger_one_per_kind")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.account_name or self.bot_id}"

    @property
    def error_shown(self) -> str:
        return shown(self.last_error_stored) if self.last_error_stored else self.last_error

    @property
    def working(self) -> bool:
        return self.status != self.Status.DISCONNECTED


class InboundUpdate(models.Model):
    """One update as the messenger posted it, kept for deduplication and for reading what came."""

    class Status(models.TextChoices):
        RECEIVED = "received", _("получено")
        HANDLED = "handled", _("обработано")
        IGNORED = "ignored", _("пропущено")
        FAILED = "failed", _("ошибка")

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="updates",
                                   verbose_name=_("подключение"))
    event_id = models.CharField(_("номер события"), max_length=64)
    update_id = models.BigIntegerField(_("номер обновления"), null=True, blank=True)  # Telegram's
    # The chat it came from: one chat's updates are handled one at a time, in arrival order.
    chat = models.ForeignKey("MessengerChat", on_delete=models.CASCADE, related_name="updates", null=True,
                             blank=True, verbose_name=_("чат"))
    payload = models.JSONField(_("данные"))
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.RECEIVED)
    received_at = models.DateTimeField(_("получено"), auto_now_add=True)
    handled_at = models.DateTimeField(_("обработано в"), null=True, blank=True)

    class Meta:
        verbose_name = _("обновление мессенджера")
        verbose_name_plural = _("обновления мессенджера")
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(fields=["connection", "event_id"], name="messenger_event_once"),
        ]
        indexes = [
            models.Index(fields=["received_at"], name="messenger_update_age"),
            models.Index(fields=["chat", "status", "id"], name="messenger_update_queue"),
        ]

    def __str__(self) -> str:
        return f"{self.connection_id}:{self.event_id}"


class MessengerChat(models.Model):
    """A person writing to the bot in a messenger: their name there and whether they blocked it."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="chats",
                                   verbose_name=_("подключение"))
    chat_id = models.CharField(_("чат"), max_length=64)
    name = models.CharField(_("имя"), max_length=200, blank=True)
    username = models.CharField(_("имя пользователя"), max_length=64, blank=True)
    blocked_at = models.DateTimeField(_("заблокировал бота"), null=True, blank=True)
    # Set while a worker handles this chat's updates (messengers/turns.py): the others leave them to it.
    handling_since = models.DateTimeField(_("обрабатывается с"), null=True, blank=True)
    created_at = models.DateTimeField(_("первое сообщение"), auto_now_add=True)

    class Meta:
        verbose_name = _("чат мессенджера")
        verbose_name_plural = _("чаты мессенджеров")
        constraints = [models.UniqueConstraint(fields=["connection", "chat_id"], name="messenger_chat_once")]

    def __str__(self) -> str:
        return self.name or self.chat_id


class Delivery(models.Model):
    """One call to a messenger that a visitor should see (a reply, an operator's message, a note)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("ждёт отправки")
        SENDING = "sending", _("отправляется")
        DELIVERED = "delivered", _("доставлено")
        FAILED = "failed", _("не доставлено")
        BLOCKED = "blocked", _("пользователь заблокировал бота")

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="deliveries",
                                   verbose_name=_("подключение"))
    chat = models.ForeignKey(MessengerChat, on_delete=models.CASCADE, related_name="deliveries",
                             verbose_name=_("чат"))
    message_id = models.BigIntegerField(_("сообщение"), null=True, blank=True)
    # An operator's notice or answer in their own chat: the conversation it is about, so that a
    # reply to the sent message (its number there, `result_message_id`) reaches that conversation.
    conversation = models.ForeignKey(Conversation, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+", verbose_name=_("разговор"))
    result_message_id = models.BigIntegerField(_("номер отправленного сообщения"), null=True, blank=True)
    # What the call shows, so that handling an update or a message again never sends it twice:
    # «m:<message>:<part>» for a stored message, «u:<update>» for a reply that is not stored.
    key = models.CharField(_("ключ"), max_length=64)
    method = models.CharField(_("вызов"), max_length=64)
    params = models.JSONField(_("параметры"))
    status = models.CharField(_("статус"), max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(_("попыток"), default=0)
    response_status = models.PositiveSmallIntegerField(_("код ответа"), null=True, blank=True)
    error = models.CharField(_("ошибка"), max_length=500, blank=True)
    claimed_at = models.DateTimeField(_("взято в отправку"), null=True, blank=True)
    created_at = models.DateTimeField(_("создано"), auto_now_add=True)
    delivered_at = models.DateTimeField(_("доставлено в"), null=True, blank=True)

    class Meta:
        verbose_name = _("доставка в мессенджер")
        verbose_name_plural = _("доставки в мессенджеры")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["connection", "-created_at"], name="messenger_delivery_recent"),
            models.Index(fields=["chat", "status", "id"], name="messenger_delivery_queue"),
            models.Index(fields=["chat", "result_message_id"], name="messenger_delivery_sent"),
        ]
        constraints = [models.UniqueConstraint(fields=["chat", "key"], name="messenger_delivery_once")]

    def __str__(self) -> str:
        return f"{self.method} → {self.chat_id} ({self.status})"


class OperatorLink(models.Model):
    """An operator's Telegram chat with the bot: conversations waiting for an operator reach it,
    and the operator answers, takes, releases and closes them from there."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="operator_links",
                             verbose_name=_("оператор"))
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="operator_links",
                                   verbose_name=_("подключение"))
    chat = models.ForeignKey(MessengerChat, on_delete=models.CASCADE, related_name="operator_links",
                             verbose_name=_("чат"))
    linked_at = models.DateTimeField(_("связан"), auto_now_add=True)

    class Meta:
        verbose_name = _("чат оператора")
        verbose_name_plural = _("чаты операторов")
        constraints = [
            models.UniqueConstraint(fields=["user", "connection"], name="messenger_operator_once"),
            models.UniqueConstraint(fields=["chat"], name="messenger_operator_chat_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.chat}"


class OperatorLinkCode(models.Model):
    """A one-time code that links the Telegram chat it is sent from to its operator."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                             verbose_name=_("оператор"))
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+", verbose_name=_("бот"))
    code = models.CharField(_("код связи"), max_length=16, unique=True, default=new_code)
    expires_at = models.DateTimeField(_("действует до"))
    used_at = models.DateTimeField(_("использован"), null=True, blank=True)

    class Meta:
        verbose_name = _("код связи с Telegram")
        verbose_name_plural = _("коды связи с Telegram")

    def __str__(self) -> str:
        return f"{self.user} · {self.bot_id}"
