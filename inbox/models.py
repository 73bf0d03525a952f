"""What operators keep beside the conversations: the owner's canned replies (per bot).

What must stay true:
- A canned reply belongs to one bot: the inbox offers an operator only their bot's replies, and
  another bot's reply id is refused like a missing one (`inbox.canned`).
- A reply's text fits an operator message (chat.writes.MAX_TEXT): a longer one is refused with a
  readable error before anything is stored.
"""

from __future__ import annotations

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
