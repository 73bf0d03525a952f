"""What operators keep beside the conversations: the owner's canned replies (per bot) and the
operators' notes in a transcript.

What must stay true:
- A canned reply belongs to one bot: the inbox offers an operator only their bot's replies, and
  another bot's reply id is refused like a missing one (`inbox.canned`).
- A reply's text fits an operator message (chat.writes.MAX_TEXT): a longer one is refused with a
  readable error before anything is stored.
- A note is never a `chat.Message`: nothing that reaches a visitor reads this table.
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

