"""The feedback layer's rows: Gaps (topics of questions the bot could not answer well), conversation
outcomes, and the log of weekly digests. All derived from the chat, which they read through
`chat.selectors`; each refresh is idempotent."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from bots.models import Bot
from chat.models import Conversation, Message
from knowledge.models import Entry


class Gap(models.Model):
    """One topic: questions grouped by word stems and by meaning (ten wordings of one
    question are one row, not ten)."""

    class Status(models.TextChoices):
        OPEN = "open", _("без ответа")
        ANSWERED = "answered", _("отвечено")
        HIDDEN = "hidden", _("скрыто")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="gaps", verbose_name=_("бот"))
    title = models.CharField(_("тема"), max_length=300)
    status = models.CharField(_("состояние"), max_length=10, choices=Status.choices, default=Status.OPEN)
    count = models.PositiveIntegerField(_("вопросов"), default=0)
    first_seen = models.DateTimeField(_("впервые"))
    last_seen = models.DateTimeField(_("последний раз"))
    entry = models.ForeignKey(
        Entry, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("ответ")
    )
    answered_at = models.DateTimeField(_("отвечено"), null=True, blank=True)
    created_at = models.DateTimeField(verbose_name=_("создан"), auto_now_add=True)
    # Rows the owner said are other topics («Это разные темы»): never suggested for a merge with this one.
    kept_apart = models.JSONField(_("не объединять с"), default=list, blank=True)

    class Meta:
        verbose_name = _("пробел в знаниях")
        verbose_name_plural = _("пробелы в знаниях")
        ordering = ["-count", "-last_seen"]
        indexes = [models.Index(fields=["bot", "status", "-count"], name="gap_bot_status_count")]

    def __str__(self) -> str:
        return self.title


class GapQuestion(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    gap = models.ForeignKey(Gap, on_delete=models.CASCADE, related_name="questions", verbose_name=_("тема"))
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="+", verbose_name=_("вопрос"))
    text = models.TextField(_("вопрос"))
    reason = models.CharField(_("почему"), max_length=20)
    stems = models.JSONField(default=list)
    vector = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=64, blank=True)
    asked_at = models.DateTimeField(_("когда"))
    # The row the question was in when the owner merged it into another (null: grouped by the bot
    # and never part of a merge). Grouping learns the nouns two such facets of a merged row share.
    facet = models.BigIntegerField(_("из темы"), null=True, blank=True)

    class Meta:
        verbose_name = _("вопрос без ответа")
        verbose_name_plural = _("вопросы без ответа")
        ordering = ["asked_at", "id"]
        indexes = [models.Index(fields=["gap", "asked_at"], name="gap_question_gap_asked")]

    def __str__(self) -> str:
        return self.text[:80]


class GapCursor(models.Model):
    """How far the Gaps of a bot have read the chat: the last trigger message id seen, and the last
    operator message read for proposals."""

    bot = models.OneToOneField(Bot, on_delete=models.CASCADE, related_name="+", primary_key=True)
    last_message_id = models.BigIntegerField(default=0)
    last_operator_message_id = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.bot_id}: {self.last_message_id}"


class OperatorAnswer(models.Model):
    """«Оператор ответил: … Добавить в справку?»: what operators answered to a question that no entry
    covers, proposed to the owner as a Q/A entry. One row per visitor question; an operator's
    later messages to the same question are added to its answer while it is still proposed."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", _("предложено")
        ACCEPTED = "accepted", _("добавлено в справку")
        DISMISSED = "dismissed", _("не нужно")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+", verbose_name=_("бот"))
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+",
                                     verbose_name=_("разговор"))
    question_message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="+",
                                            verbose_name=_("вопрос"))
    question = models.TextField(_("вопрос"))
    answer = models.TextField(_("ответ оператора"))
    answer_message_ids = models.JSONField(verbose_name=_("сообщения ответа"), default=list)
    operator_name = models.CharField(_("оператор"), max_length=150, blank=True)
    status = models.CharField(_("состояние"), max_length=10, choices=Status.choices, default=Status.PROPOSED)
    entry = models.ForeignKey(
        Entry, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("запись")
    )
    answered_at = models.DateTimeField(_("когда ответил"))
    decided_at = models.DateTimeField(_("решено"), null=True, blank=True)

    class Meta:
        verbose_name = _("ответ оператора")
        verbose_name_plural = _("ответы операторов")
        ordering = ["-answered_at", "-id"]
        indexes = [models.Index(fields=["bot", "status", "-answered_at"], name="opanswer_bot_status")]

    def __str__(self) -> str:
        return self.question[:80]


class Outcome(models.Model):
    """How a conversation ended (outcome attribution, the Feedback layer)."""

    class Kind(models.TextChoices):
        ANSWERED = "answered", _("ответил бот")
        HANDED_OFF = "handed_off", _("передан оператору")
        LEAD = "lead", _("оставлен контакт")
        ABANDONED = "abandoned", _("ушёл после «нет точного ответа»")
        OPERATOR_CLOSED = "operator_closed", _("закрыт оператором")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="outcomes", verbose_name=_("бот"))
    conversation = models.OneToOneField(Conversation, verbose_name=_("разговор"),
        on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(_("итог"), max_length=20, choices=Kind.choices)
    started_at = models.DateTimeField(_("начат"))
    updated_at = models.DateTimeField(verbose_name=_("обновлён"), auto_now=True)

    class Meta:
        verbose_name = _("итог разговора")
        verbose_name_plural = _("итоги и точность")
        # `kind` rides along so the dashboard's counts and weekly outcomes are index-only scans
        # (owner/dashboard/overview.py; bench/dashboard_pages.py at 50k conversations).
        indexes = [models.Index(fields=["bot", "started_at"], include=["kind"], name="outcome_bot_started_kind")]

    def __str__(self) -> str:
        return f"{self.conversation_id}: {self.kind}"


class DigestLog(models.Model):
    """One weekly digest sent for one bot: the weekly task sends each week once."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    period_start = models.DateField()
    recipients = models.JSONField(default=list)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bot", "period_start"], name="digest_once_per_week")]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.period_start}"


class Experiment(models.Model):
    """An A/B test of the bot's voice, its «условия» or its thresholds (docs/architecture.md). Arm "a" is the
    bot as it is; arm "b" gets `variant` (the settings it changes, in assistant/voice's form).
    Visitors are split by a stable hash of their id (voice/effective.py: `arm_of`); each
    new conversation records its arm (`Conversation.variant` = "<id>:<arm>"), and the outcomes are
    compared per arm (feedback/experiments.py). At most one experiment runs per bot."""

    class Kind(models.TextChoices):
        VOICE = "voice", _("тон (слайдеры)")
        CONDITIONS = "conditions", _("условия")
        THRESHOLD = "threshold", _("пороги")

    class Metric(models.TextChoices):
        ANSWERED = "answered", _("бот ответил")
        THUMBS_DOWN = "thumbs_down", _("«не помогло»")
        HANDOFF = "handoff", _("передан оператору")
        LEAD = "lead", _("оставлен контакт")

    class Status(models.TextChoices):
        RUNNING = "running", _("идёт")
        STOPPED = "stopped", _("остановлен")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="experiments", verbose_name=_("бот"))
    name = models.CharField(_("название"), max_length=200)
    kind = models.CharField(_("что сравниваем"), max_length=16, choices=Kind.choices)
    metric = models.CharField(_("главный показатель"), max_length=16, choices=Metric.choices,
                              default=Metric.ANSWERED)
    share = models.PositiveSmallIntegerField(_("доля варианта Б, %"), default=50)
    baseline = models.JSONField(_("вариант А"), default=dict)  # the bot's settings when it started, for the record
    variant = models.JSONField(_("вариант Б"), default=dict)
    status = models.CharField(_("состояние"), max_length=10, choices=Status.choices, default=Status.RUNNING)
    winner = models.CharField(_("применён вариант"), max_length=1, blank=True)
    started_at = models.DateTimeField(_("начат"), auto_now_add=True)
    stopped_at = models.DateTimeField(_("остановлен"), null=True, blank=True)

    class Meta:
        verbose_name = _("эксперимент")
        verbose_name_plural = _("эксперименты")
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["bot"], condition=models.Q(status="running"),
                                    name="experiment_one_running_per_bot"),
            models.CheckConstraint(condition=models.Q(share__gte=1, share__lte=99), name="experiment_share_1_99"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def running(self) -> bool:
        return self.status == self.Status.RUNNING
