"""What operators keep beside the conversations: the owner's canned replies (per bot), the
operators' notes in a transcript, and the browsers that get Web Push about waiting visitors
(`PushSubscription`).

What must stay true:
- A canned reply belongs to one bot: the inbox offers an operator only their bot's replies, and
  another bot's reply id is refused like a missing one (`inbox.canned`).
- A reply's text fits an operator message (chat.writes.MAX_TEXT): a longer one is refused with a
  readable error before anything is stored.
- A note is never a `chat.Message`: nothing that reaches a visitor reads this table.
- A push subscription is one user's: it is sent only notices of the bots that user works in.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxLengthValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot

MAX_CANNED_TEXT = 2000
SHORTCUT_PATTERN = r"^[\w-]{1,32}$"


class CannedReply(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="canned_replies", verbose_name=_("бот"))
    shortcut = models.CharField(
        _("сокращение"), max_length=32,
        validators=[RegexValidator(SHORTCUT_PATTERN, _("Сокращение: буквы, цифры, «-» и «_», без пробелов."))],
        help_text=_("Оператор набирает «/» и первые буквы сокращения: /доставка."),
    )
    title = models.CharField(_("название"), max_length=100)
    text = models.TextField(
        _("текст"), max_length=MAX_CANNED_TEXT, validators=[MaxLengthValidator(MAX_CANNED_TEXT)],
        help_text=_("{оператор} заменяется именем оператора, {посетитель} — именем посетителя."),
    )
    uses = models.PositiveIntegerField(_("использован, раз"), default=0, editable=False)
    created_at = models.DateTimeField(_("создан"), auto_now_add=True)
    updated_at = models.DateTimeField(_("изменён"), auto_now=True)

    class Meta:
        verbose_name = _("шаблон ответа")
        verbose_name_plural = _("шаблоны ответов")
        ordering = ["bot", "shortcut"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "shortcut"], name="cannedreply_unique_shortcut"),
        ]

    def __str__(self) -> str:
        return f"/{self.shortcut} — {self.title}"


class Note(models.Model):
    """An operator's note in a conversation's transcript: the bot's other operators read it in the
    inbox, the visitor never does. Its own table, not a `chat.Message` role: every path to the
    visitor (the widget's frames and restore, messengers, the API, the model's history) reads
    messages, so a note cannot reach one by a forgotten filter."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="inbox_notes", verbose_name=_("бот"))
    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="inbox_notes", verbose_name=_("разговор"),
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="inbox_notes", verbose_name=_("автор"),
    )
    author_name = models.CharField(_("имя автора"), max_length=150, blank=True)
    text = models.TextField(_("текст"))
    created_at = models.DateTimeField(_("время"), auto_now_add=True)

    class Meta:
        verbose_name = _("заметка")
        verbose_name_plural = _("заметки")
        ordering = ["id"]
        indexes = [models.Index(fields=["conversation", "id"], name="note_conversation_id")]

    def __str__(self) -> str:
        return self.text[:60]


class PushSubscription(models.Model):
    """One browser of one operator that agreed to Web Push (PushManager.subscribe()): the push
    service's endpoint and the browser's keys the notices are encrypted to. Written by
    `inbox.push` only. The endpoint is the browser's: a second account subscribing in the same
    browser takes it over, so a notice never reaches someone who no longer signs in there."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions",
        verbose_name=_("пользователь"),
    )
    endpoint = models.URLField(_("адрес службы уведомлений"), max_length=1024, unique=True)
    p256dh = models.CharField(_("ключ p256dh"), max_length=100)
    auth = models.CharField(_("ключ auth"), max_length=32)
    language = models.CharField(_("язык"), max_length=10, blank=True)
    created_at = models.DateTimeField(_("создана"), auto_now_add=True)
    last_success_at = models.DateTimeField(_("последняя доставка"), null=True, blank=True)
    failures = models.PositiveIntegerField(_("неудач подряд"), default=0)
    last_error = models.CharField(_("последняя ошибка"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("подписка на уведомления")
        verbose_name_plural = _("подписки на уведомления")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.endpoint[:60]}"
