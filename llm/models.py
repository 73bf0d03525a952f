"""Per-bot model choices, billing lines (Usage) and the run journal (RunEvent).

Usage and RunEvent rows are written once and never edited: they are the evidence behind a bill
and behind "the platform repaired this answer itself", so the admin shows them read-only.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from bots.models import Bot


class BotLLMSettings(models.Model):
    """Optional overrides for one bot; an empty field means "as the installation is configured"."""

    class Provider(models.TextChoices):
        DEFAULT = "", _("как в настройках установки")
        ANTHROPIC = "anthropic", "Anthropic"
        OPENAI = "openai", _("OpenAI-совместимый")
        NONE = "none", _("без модели (только поиск по справке)")

    bot = models.OneToOneField(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="llm_settings")
    provider = models.CharField(
        _("поставщик"), max_length=16, choices=Provider.choices, default=Provider.DEFAULT, blank=True
    )
    fast_model = models.CharField(
        _("быстрая модель"), max_length=100, blank=True,
        help_text=_("Для ответов в чате, где человек ждёт. Пусто — по умолчанию установки."),
    )
    strong_model = models.CharField(
        _("сильная модель"), max_length=100, blank=True,
        help_text=_("Для фоновых задач и ремонтов. Пусто — по умолчанию установки."),
    )

    class Meta:
        verbose_name = _("настройки модели")
        verbose_name_plural = _("настройки моделей")

    def __str__(self) -> str:
        return f"{self.bot}: {self.provider or '—'}"


class Usage(models.Model):
    """One line per model call, failed calls included (zero tokens, zero cost, real latency)."""

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="llm_usage")
    route = models.CharField(_("маршрут"), max_length=64)
    purpose = models.CharField(_("назначение"), max_length=64)
    run_id = models.BigIntegerField(_("прогон"), null=True, blank=True, db_index=True)
    provider = models.CharField(_("поставщик"), max_length=16)
    model = models.CharField(_("модель"), max_length=100)
    input_tokens = models.PositiveIntegerField(_("входные токены"), default=0)
    output_tokens = models.PositiveIntegerField(_("выходные токены"), default=0)
    cache_read_tokens = models.PositiveIntegerField(_("токены из кэша"), default=0)
    cache_write_tokens = models.PositiveIntegerField(_("токены в кэш"), default=0)
    latency_ms = models.PositiveIntegerField(_("задержка, мс"), default=0)
    cost_usd = models.DecimalField(_("оценка стоимости, $"), max_digits=12, decimal_places=6, default=0)
    created_at = models.DateTimeField(_("когда"), default=timezone.now)

    class Meta:
        verbose_name = _("расход модели")
        verbose_name_plural = _("расход моделей")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["bot", "created_at"], name="llm_usage_bot_created")]

    def __str__(self) -> str:
        return f"{self.model} {self.purpose} {self.input_tokens}/{self.output_tokens}"


class RunEvent(models.Model):
    """The run journal: one row per model call, form repair, judge verdict, content repair, skipped
    check (with its reason), output-filter block, handoff and approval decision."""

    class Kind(models.TextChoices):
        LLM_CALL = "llm_call", _("вызов модели")
        FORM_REPAIR = "form_repair", _("ремонт формы")
        JUDGE = "judge", _("оценка")
        CONTENT_REPAIR = "content_repair", _("ремонт содержания")
        CHECK_SKIPPED = "check_skipped", _("проверка не выполнялась")
        FILTER_BLOCK = "filter_block", _("блок фильтра вывода")
        HANDOFF = "handoff", _("передача человеку")
        APPROVAL = "approval", _("решение контролёра")
        APPROACH_CHANGE = "approach_change", _("смена подхода")
        BUDGET_SPENT = "budget_spent", _("бюджет ремонтов исчерпан")
        PUBLISH = "publish", _("публикация")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="run_events")
    # A plain number, not a foreign key: the chat app owns conversations and may come and go.
    conversation_id = models.BigIntegerField(_("разговор"), null=True, blank=True, db_index=True)
    # The run of an async route this row belongs to (a plain number too: routes own their runs).
    run_id = models.BigIntegerField(_("прогон"), null=True, blank=True, db_index=True)
    kind = models.CharField(_("событие"), max_length=32, choices=Kind.choices)
    route = models.CharField(_("маршрут"), max_length=64, blank=True)
    purpose = models.CharField(_("назначение"), max_length=64, blank=True)
    detail = models.JSONField(_("подробности"), default=dict, blank=True)
    ok = models.BooleanField(_("успешно"), default=True)
    created_at = models.DateTimeField(_("когда"), default=timezone.now)

    class Meta:
        verbose_name = _("событие прогона")
        verbose_name_plural = _("журнал прогонов")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["bot", "created_at"], name="llm_runevent_bot_created")]

    def __str__(self) -> str:
        return f"{self.kind} {self.route}/{self.purpose} ({'ok' if self.ok else 'fail'})"
