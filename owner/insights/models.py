"""Batch tests of a bot (Fin's batch tests): a saved set of questions, its runs, and what the bot
answered to each question in each run. A run is compared with the set's previous finished run."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot
from core.texts import shown
from owner.insights.expectations import Check, expectation_check


class QuestionSet(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="question_sets", verbose_name=_("бот"))
    name = models.CharField(_("название"), max_length=100)
    created_at = models.DateTimeField(_("создан"), auto_now_add=True)
    updated_at = models.DateTimeField(_("изменён"), auto_now=True)

    class Meta:
        verbose_name = _("набор вопросов")
        verbose_name_plural = _("наборы вопросов")
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name


class SetQuestion(models.Model):
    """One question of a set, with what a right answer shows (both optional): the page it cites,
    a phrase it contains."""

    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveSmallIntegerField(_("номер"))
    question = models.TextField(_("вопрос"))
    expected_url = models.URLField(_("ожидаемый источник"), max_length=2000, blank=True)
    expected_phrase = models.CharField(_("ожидаемая фраза"), max_length=300, blank=True)

    class Meta:
        verbose_name = _("вопрос набора")
        verbose_name_plural = _("вопросы набора")
        ordering = ["position"]

    def __str__(self) -> str:
        return self.question[:80]


class BatchRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("в очереди")
        RUNNING = "running", _("идёт")
        DONE = "done", _("готово")
        FAILED = "failed", _("не удался")

    class Trigger(models.TextChoices):
        MANUAL = "manual", _("вручную")
        KNOWLEDGE = "knowledge", _("после изменения знаний")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="batch_runs", verbose_name=_("бот"))
    question_set = models.ForeignKey(
        QuestionSet, on_delete=models.CASCADE, related_name="runs", verbose_name=_("набор")
    )
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    trigger = models.CharField(_("запуск"), max_length=16, choices=Trigger.choices, default=Trigger.MANUAL)
    reason = models.CharField(_("причина"), max_length=300, blank=True)
    # The reason and the error as stored texts (core/texts.py), shown in the reader's language;
    # `reason` and `error` keep their Russian.
    reason_stored = models.JSONField(_("причина для перевода"), null=True, blank=True, editable=False)
    total = models.PositiveSmallIntegerField(_("вопросов"), default=0)
    done = models.PositiveSmallIntegerField(_("готово"), default=0)
    error = models.CharField(_("ошибка"), max_length=500, blank=True)
    error_stored = models.JSONField(_("ошибка для перевода"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("создан"), auto_now_add=True)
    started_at = models.DateTimeField(_("начат"), null=True, blank=True)
    finished_at = models.DateTimeField(_("закончен"), null=True, blank=True)

    class Meta:
        verbose_name = _("прогон набора")
        verbose_name_plural = _("прогоны наборов")
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["question_set", "status", "created_at"], name="insights_run_set_status")]

    def __str__(self) -> str:
        return f"{self.question_set} #{self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0

    @property
    def reason_shown(self) -> str:
        return shown(self.reason_stored) if self.reason_stored else self.reason

    @property
    def error_shown(self) -> str:
        return shown(self.error_stored) if self.error_stored else self.error


class BatchResult(models.Model):
    """What the chain answered to one question in one run. The question is copied: a set edited
    later still shows what was asked, and runs are compared by the question's text."""

    class Route(models.TextChoices):
        RULES = "rules", _("правила")
        SEARCH = "search", _("поиск")
        MODEL = "model", _("модель")
        ORDER = "order", _("заказ")
        NO_ANSWER = "no_answer", _("нет ответа")

    run = models.ForeignKey(BatchRun, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveSmallIntegerField(_("номер"))
    question = models.TextField(_("вопрос"))
    answer = models.TextField(_("ответ"), blank=True)
    cited_url = models.CharField(_("источник"), max_length=2000, blank=True)
    cited_title = models.CharField(_("заголовок источника"), max_length=1000, blank=True)
    route = models.CharField(_("путь ответа"), max_length=16, choices=Route.choices)
    score = models.FloatField(_("оценка"), null=True, blank=True)
    expected_url = models.CharField(_("ожидаемый источник"), max_length=2000, blank=True)
    expected_phrase = models.CharField(_("ожидаемая фраза"), max_length=300, blank=True)
    passed = models.BooleanField(_("как ожидалось"), null=True, blank=True)

    class Meta:
        verbose_name = _("ответ прогона")
        verbose_name_plural = _("ответы прогона")
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="insights_result_run_position")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.position}: {self.route}"

    @property
    def expectation(self) -> Check:
        """Whether the answer is as the set expected and, if not, why (in the reader's language)."""
        return expectation_check(answer=self.answer, route=self.route, cited_url=self.cited_url,
                                 cited_title=self.cited_title, expected_url=self.expected_url,
                                 expected_phrase=self.expected_phrase)
