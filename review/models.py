"""The review queue and correction memory (docs/architecture.md).

What must stay true:
- one ReviewItem per bot answer (`message` is unique): a flag raised twice adds a reason, never a twin;
- one pending ReviewItem per (conversation, question): the same question asked again in that
  conversation (word for word, or in other words by the chat's rephrase rule) adds its flagged
  answer to the first one's item (`repeat_ids`, `repeats`, `last_seen_at`), never a new row;
- an item is decided once: a second decision is refused until the first is undone;
- a Correction links the item (if any) to the entry it created and to the culprits it flagged, with
  each culprit's flag as it was before, so an undo restores both sides exactly. Nothing is deleted:
  an undone correction keeps its row, its entry is switched off, and both keep their history.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from bots.models import Bot
from chat.models import Conversation, Message
from knowledge.models import Entry


class ReviewItem(models.Model):
    class Reason(models.TextChoices):
        LOW_CONFIDENCE = "low_confidence", _("низкая уверенность")
        FRICTION = "friction", _("недовольство посетителя")
        ESCALATION = "escalation", _("просьба позвать оператора")

    class Status(models.TextChoices):
        PENDING = "pending", _("ждёт решения")
        DECIDED = "decided", _("решено")

    class Decision(models.TextChoices):
        CORRECT = "correct", _("Всё верно")
        FIXED = "fixed", _("Исправить")
        ADDED = "added", _("Добавить в знания")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="review_items", verbose_name=_("бот"))
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="+", verbose_name=_("ответ бота"))
    reasons = ArrayField(models.CharField(max_length=20, choices=Reason.choices), verbose_name=_("причины"))
    question = models.TextField(_("вопрос"), blank=True)
    answer = models.TextField(_("ответ бота"))
    confidence = models.FloatField(_("уверенность"), null=True, blank=True)
    cited_entry_id = models.BigIntegerField(_("запись, из которой взят ответ"), null=True, blank=True)
    source_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, verbose_name=_("источники"))
    answered_at = models.DateTimeField(_("время ответа"))
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, null=True, blank=True, related_name="+", verbose_name=_("разговор")
    )
    # Later flagged answers to the same question in the same conversation: counted here, not queued again.
    repeat_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, verbose_name=_("ответы на повторы"))
    repeats = models.PositiveIntegerField(_("сколько раз спросили"), default=1)
    last_seen_at = models.DateTimeField(_("спросили последний раз"), null=True, blank=True)
    status = models.CharField(_("состояние"), max_length=10, choices=Status.choices, default=Status.PENDING)
    decision = models.CharField(_("решение"), max_length=10, choices=Decision.choices, blank=True)
    corrected_text = models.TextField(_("исправленный ответ"), blank=True)
    entry = models.ForeignKey(
        Entry, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("запись в знаниях")
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("кто решил"),
    )
    decided_at = models.DateTimeField(_("когда решено"), null=True, blank=True)
    created_at = models.DateTimeField(verbose_name=_("создан"), auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        verbose_name = _("ответ на проверку")
        verbose_name_plural = _("очередь проверки")
        ordering = ["answered_at", "id"]
        indexes = [
            models.Index(fields=["bot", "status", "answered_at", "id"], name="review_item_queue"),
            models.Index(fields=["bot", "decided_at"], name="review_item_decided"),
            GinIndex(fields=["reasons"], name="review_item_reasons"),
            models.Index(fields=["conversation", "status"], name="review_item_conversation"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.question[:60]}"

    @property
    def culprit_ids(self) -> list[int]:
        """The entries that produced the answer: the one it was taken from. An answer that cited
        nothing («нет точного ответа», small talk) had no culprit: it lacked knowledge."""
        return [self.cited_entry_id] if self.cited_entry_id else []


class Correction(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("действует")
        UNDONE = "undone", _("отменена")

    class Origin(models.TextChoices):
        REVIEW = "review", _("очередь проверки")
        GAP = "gap", _("пробелы в знаниях")
        COMMAND = "command", _("из командной строки")
        OPERATOR = "operator", _("ответ оператора")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="corrections", verbose_name=_("бот"))
    item = models.ForeignKey(
        ReviewItem, on_delete=models.SET_NULL, null=True, blank=True, related_name="corrections",
        verbose_name=_("ответ на проверку"),
    )
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="+", verbose_name=_("запись"))
    kind = models.CharField(_("вид"), max_length=20, choices=Entry.Kind.choices)
    origin = models.CharField(_("откуда"), max_length=10, choices=Origin.choices)
    question = models.TextField(_("вопрос"))
    answer = models.TextField(_("ответ"))
    status = models.CharField(_("состояние"), max_length=10, choices=Status.choices, default=Status.ACTIVE)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("автор"),
    )
    created_at = models.DateTimeField(_("создана"), auto_now_add=True)
    undone_at = models.DateTimeField(_("отменена в"), null=True, blank=True)
    culprits: models.ManyToManyField[Entry, CorrectionCulprit] = models.ManyToManyField(
        Entry, through="CorrectionCulprit", related_name="+", verbose_name=_("виновники")
    )
    history = HistoricalRecords(m2m_fields=[])

    class Meta:
        verbose_name = _("поправка")
        verbose_name_plural = _("поправки")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["bot", "status", "-created_at"], name="correction_bot_recent")]

    def __str__(self) -> str:
        return self.question[:80]


class CorrectionCulprit(models.Model):
    """An entry a correction flagged for review, with its flag before, for the undo."""

    correction = models.ForeignKey(Correction, verbose_name=_("поправка"),
        on_delete=models.CASCADE, related_name="culprit_links")
    entry = models.ForeignKey(Entry, verbose_name=_("запись"), on_delete=models.CASCADE, related_name="+")
    flagged_before = models.BooleanField(verbose_name=_("была на проверке до поправки"), default=False)

    class Meta:
        verbose_name = _("виновник")
        verbose_name_plural = _("виновники")
        constraints = [
            models.UniqueConstraint(fields=["correction", "entry"], name="correction_culprit_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.correction_id} → {self.entry_id}"
