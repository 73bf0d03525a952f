"""Customer reviews, the owner's settings of the review-reply route, and route runs.

A run is one pass of a route over one subject (a review): its draft, the judge's last verdict,
whether its approval point is manual, the person's decision and the publication. Every step of
it is in the run journal (assistant/llm RunEvent rows with this run's id), which is the evidence;
the run row is the state.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from bots.models import Bot, new_webhook_secret
from core.texts import shown


class ReviewReplySettings(models.Model):
    """The owner's side of the review-reply route: auto-pass rule, banned words, where to publish."""

    bot = models.OneToOneField(Bot, verbose_name=_("бот"),
        on_delete=models.CASCADE, related_name="review_reply_settings")
    auto_pass = models.BooleanField(
        _("автопропуск"), default=False,
        help_text=_("Проверенный ответ, подходящий под правило, публикуется без контролёра. "
                    "Непроверенный — никогда."),
    )
    auto_pass_min_rating = models.PositiveSmallIntegerField(
        _("автопропуск: оценка отзыва от"), default=4, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    auto_pass_min_score = models.FloatField(
        _("автопропуск: оценка проверки от"), default=0.9, validators=[MinValueValidator(0), MaxValueValidator(1)]
    )
    auto_pass_no_facts = models.BooleanField(_("автопропуск: только ответы без фактов"), default=True)
    banned_words = models.TextField(
        _("запрещённые слова"), blank=True, help_text=_("По одному слову или выражению в строке.")
    )
    publish_url = models.URLField(
        _("адрес публикации"), max_length=500, blank=True,
        help_text=_("Сюда уходят одобренные ответы (подписанный webhook). Пусто — адрес webhook бота."),
    )
    intake_secret = models.CharField(_("секрет приёма отзывов"), max_length=64, default=new_webhook_secret)

    class Meta:
        verbose_name = _("настройки ответов на отзывы")
        verbose_name_plural = _("настройки ответов на отзывы")

    def __str__(self) -> str:
        return str(self.bot)

    def banned_list(self) -> list[str]:
        return [line.strip() for line in self.banned_words.splitlines() if line.strip()]


class CustomerReview(models.Model):
    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="customer_reviews")
    author = models.CharField(_("автор"), max_length=200)
    rating = models.PositiveSmallIntegerField(_("оценка"), validators=[MinValueValidator(1), MaxValueValidator(5)])
    text = models.TextField(_("текст отзыва"))
    product = models.CharField(_("товар"), max_length=300, blank=True)
    written_on = models.DateField(_("дата отзыва"))
    source = models.CharField(_("площадка"), max_length=100)
    # The same review imported twice (or sent twice by a webhook) is one row.
    fingerprint = models.CharField(verbose_name=_("отпечаток"), max_length=64, editable=False)
    created_at = models.DateTimeField(_("получен"), default=timezone.now)

    class Meta:
        verbose_name = _("отзыв покупателя")
        verbose_name_plural = _("отзывы покупателей")
        ordering = ["-written_on", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "fingerprint"], name="review_unique_bot_fingerprint"),
            models.CheckConstraint(condition=models.Q(rating__gte=1, rating__lte=5), name="review_rating_1_5"),
        ]

    def __str__(self) -> str:
        return f"{self.author} ({self.rating}★): {self.text[:60]}"


class RouteRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", _("выполняется")
        WAITING = "waiting", _("ждёт решения")
        APPROVED = "approved", _("одобрен")
        PUBLISHED = "published", _("опубликован")
        PUBLISH_FAILED = "publish_failed", _("публикация не удалась")
        REJECTED = "rejected", _("отклонён")
        HANDOFF = "handoff", _("передан человеку")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="route_runs")
    route = models.CharField(_("маршрут"), max_length=64)
    review = models.ForeignKey(
        CustomerReview, on_delete=models.CASCADE, related_name="runs", null=True, blank=True, verbose_name=_("отзыв")
    )
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.RUNNING)
    manual = models.BooleanField(_("только вручную"), default=False)
    manual_reason = models.CharField(_("почему вручную"), max_length=200, blank=True)
    checked = models.BooleanField(_("проверен"), default=False)
    score = models.FloatField(_("оценка проверки"), null=True, blank=True)
    critique = models.TextField(_("разбор оценщика"), blank=True)
    draft = models.TextField(_("черновик"), blank=True)
    final_text = models.TextField(_("итоговый текст"), blank=True)
    has_facts = models.BooleanField(_("есть факты"), default=False)
    repairs = models.PositiveSmallIntegerField(_("ремонтов"), default=0)
    handoff_reason = models.CharField(_("причина передачи"), max_length=200, blank=True)
    auto_passed = models.BooleanField(_("автопропуск"), default=False)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("решил"),
    )
    decided_at = models.DateTimeField(_("решено"), null=True, blank=True)
    publish_attempts = models.PositiveSmallIntegerField(_("попыток публикации"), default=0)
    publish_status = models.PositiveSmallIntegerField(_("ответ при публикации"), null=True, blank=True)
    publish_error = models.CharField(_("ошибка публикации"), max_length=500, blank=True)
    # The same error untranslated (core/texts.py); null on runs published before it.
    publish_error_stored = models.JSONField(_("ошибка публикации для перевода"), null=True, blank=True,
                                            editable=False)
    published_at = models.DateTimeField(_("опубликован"), null=True, blank=True)
    started_at = models.DateTimeField(_("начат"), default=timezone.now)
    finished_at = models.DateTimeField(_("закончен"), null=True, blank=True)

    class Meta:
        verbose_name = _("прогон маршрута")
        verbose_name_plural = _("прогоны маршрутов")
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["bot", "route", "status"], name="routerun_bot_route_status")]

    def __str__(self) -> str:
        return f"{self.route} #{self.pk} ({self.status})"

    @property
    def publish_error_shown(self) -> str:
        return shown(self.publish_error_stored) if self.publish_error_stored else self.publish_error

    @property
    def text(self) -> str:
        """What would be published: the person's edit if there is one, else the draft."""
        return self.final_text or self.draft
