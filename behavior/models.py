"""Proactive invitations: the owner's rules for when the widget speaks first, and the record of
every invitation shown (once per visitor per rule per N days; conversions counted per rule).

What must stay true:
- A rule belongs to one bot; a show names its rule and that rule's bot, never another's.
- A show is recorded when the widget really showed it, and converts at most once: into the
  conversation the visitor started after seeing it.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot
from core.labels import visitor_label

MAX_INVITATION_TEXT = 300
MAX_SECONDS_ON_PAGE = 3600


class InvitationRule(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="invitation_rules", verbose_name=_("бот"))
    name = models.CharField(_("название"), max_length=100)
    enabled = models.BooleanField(_("включено"), default=True)
    url_pattern = models.CharField(
        _("страницы"), max_length=300, blank=True,
        help_text=_("Путь страницы, «*» — любые знаки: /catalog/* или */vacuums/*. Пусто — любая страница."),
    )
    seconds_on_page = models.PositiveIntegerField(
        _("секунд на странице"), default=0, validators=[MaxValueValidator(MAX_SECONDS_ON_PAGE)],
        help_text=_("Показать, когда посетитель пробыл на странице столько секунд (0 — сразу)."),
    )
    returning_only = models.BooleanField(
        _("только вернувшимся"), default=False, help_text=_("Только посетителям, которые уже бывали на сайте."),
    )
    on_leave = models.BooleanField(
        _("при уходе со страницы"), default=False,
        help_text=_("Показать, когда курсор уходит за верхний край окна (посетитель собирается уйти)."),
    )
    text = models.CharField(_("текст приглашения"), max_length=MAX_INVITATION_TEXT)
    once_per_days = models.PositiveIntegerField(
        _("не чаще раза в (дней)"), default=7, validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text=_("Одному посетителю это приглашение показывается не чаще раза в столько дней."),
    )
    show_on_mobile = models.BooleanField(_("показывать на телефонах"), default=True)
    created_at = models.DateTimeField(_("создано"), auto_now_add=True)

    class Meta:
        verbose_name = _("приглашение в чат")
        verbose_name_plural = _("приглашения в чат")
        ordering = ["bot", "id"]
        indexes = [models.Index(fields=["bot", "enabled"], name="invitationrule_bot_enabled")]

    def __str__(self) -> str:
        return self.name


class InvitationShow(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="invitation_shows", verbose_name=_("бот"))
    rule = models.ForeignKey(InvitationRule, on_delete=models.CASCADE, related_name="shows",
                             verbose_name=_("приглашение"))
    visitor_id = models.CharField(_("посетитель"), max_length=64)
    page_url = models.CharField(_("страница"), max_length=500, blank=True)
    shown_at = models.DateTimeField(_("показано"), auto_now_add=True)
    conversation_id = models.BigIntegerField(_("разговор"), null=True, blank=True)
    converted_at = models.DateTimeField(_("начат разговор"), null=True, blank=True)

    class Meta:
        verbose_name = _("показ приглашения")
        verbose_name_plural = _("показы приглашений")
        ordering = ["-shown_at"]
        indexes = [models.Index(fields=["bot", "visitor_id", "-shown_at"], name="invitationshow_visitor")]

    def __str__(self) -> str:
        return f"{self.rule} → {visitor_label(started=self.shown_at)}"
