"""Conversations between a website visitor and a bot, and their messages.

What must stay true:
- A visitor has at most one open (not closed) conversation per bot: a partial unique constraint,
  so two tabs saying hello at once still share one conversation.
- A client_msg_id is unique inside its conversation: a resent message is found, never stored twice.
- A visitor message has at most one bot reply: a second answer racing the first loses at the
  database, so the visitor never sees two different answers to one question.
- A conversation in `operator` state has the operator it is assigned to; `waiting_since` is set
  exactly while it waits for one (the inbox sorts and alerts by it).
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot
from core.labels import visitor_label
from core.texts import shown

VISITOR_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
visitor_id_validator = RegexValidator(
    VISITOR_ID_PATTERN, _("Идентификатор посетителя: латиница, цифры, «_», «-», «.», «:», до 64 знаков.")
)


def _empty_flags() -> dict[str, bool]:
    return {}


class Conversation(models.Model):
    class Channel(models.TextChoices):
        """Where the visitor writes from: the site's widget or a messenger (messengers/)."""

        WIDGET = "widget", _("виджет на сайте")
        TELEGRAM = "telegram", "Telegram"
        VK = "vk", _("ВКонтакте")
        MAX = "max", "MAX"

    class State(models.TextChoices):
        BOT = "bot", _("отвечает бот")
        WAITING_OPERATOR = "waiting_operator", _("ждёт оператора")
        OPERATOR = "operator", _("у оператора")
        CLOSED = "closed", _("закрыт")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="conversations", verbose_name=_("бот"))
    visitor_id = models.CharField(_("посетитель"), max_length=64, validators=[visitor_id_validator])
    state = models.CharField(_("состояние"), max_length=20, choices=State.choices, default=State.BOT)
    # A messenger's visitor id names the channel and the chat («tg:123»): one conversation per bot ×
    # channel × chat. What the channel is also stands here, for the inbox's badge and the counts.
    channel = models.CharField(_("канал"), max_length=16, choices=Channel.choices, default=Channel.WIDGET)
    variant = models.CharField(_("вариант эксперимента"), max_length=64, blank=True)
    outcome = models.CharField(_("итог"), max_length=64, blank=True)
    last_ip = models.GenericIPAddressField(_("последний IP"), null=True, blank=True)
    page_url = models.CharField(_("страница посетителя"), max_length=500, blank=True)
    page_title = models.CharField(_("заголовок страницы"), max_length=300, blank=True)
    visitor_name = models.CharField(_("имя посетителя"), max_length=200, blank=True)
    visitor_contact = models.CharField(_("контакт посетителя"), max_length=254, blank=True)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="assigned_conversations", verbose_name=_("оператор"),
    )
    waiting_since = models.DateTimeField(_("ждёт оператора с"), null=True, blank=True)
    # Visitor messages no operator has opened yet (the inbox's badge); kept on the row so that a
    # broadcast never needs a count query.
    unread = models.PositiveIntegerField(_("непрочитано"), default=0)
    alerted_at = models.DateTimeField(_("операторам напомнили"), null=True, blank=True)
    lead_offered_at = models.DateTimeField(_("предложено оставить контакт"), null=True, blank=True)
    # The bot offers a person by itself (escalation rules) at most once per conversation.
    handoff_offered = models.BooleanField(_("оператор предложен"), default=False)
    created_at = models.DateTimeField(_("начат"), auto_now_add=True)
    updated_at = models.DateTimeField(_("обновлён"), auto_now=True)
    closed_at = models.DateTimeField(_("завершён"), null=True, blank=True)
    # Who pressed «Завершить» (chat/states.py `to_closed`); empty when the visitor's side or a task
    # closed it. The visitor's rating of the conversation is counted for this operator.
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="closed_conversations", verbose_name=_("завершил"),
    )
    # The overview's live numbers (owner/dashboard/overview.py), set once as they happen: the bot's
    # first answer that answered (chat/writes.py), the first time a person was asked for or joined
    # (chat/states.py). Outcomes settle later (feedback/outcomes.py); these never wait.
    answered_at = models.DateTimeField(_("бот впервые ответил"), null=True, blank=True)
    handed_off_at = models.DateTimeField(_("впервые передан оператору"), null=True, blank=True)

    class Meta:
        verbose_name = _("разговор")
        verbose_name_plural = _("разговоры")
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["bot", "visitor_id", "state"], name="conversation_bot_visitor_state"),
            models.Index(fields=["bot", "state", "waiting_since"], name="conversation_bot_waiting"),
            models.Index(fields=["bot", "-updated_at"], name="conversation_bot_recent"),
            # The dashboard's «conversations in the last N days» (owner/dashboard/overview.py).
            models.Index(fields=["bot", "created_at"], name="conversation_bot_started"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["bot", "visitor_id"], condition=~models.Q(state="closed"), name="conversation_one_open"
            ),
            models.CheckConstraint(
                condition=~models.Q(state="operator") | models.Q(assigned_to__isnull=False),
                name="conversation_operator_assigned",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} · {self.visitor_label}"

    @property
    def visitor_label(self) -> str:
        """How owners and operators read who this is (core/labels.py): the name the visitor left,
        else when they started writing and from which messenger; never the machine id."""
        return visitor_label(name=self.visitor_name, channel_name=self.channel_name(self.channel),
                             started=self.created_at)

    @classmethod
    def channel_name(cls, channel: str) -> str:
        """A messenger as a person reads it («ВКонтакте»); empty for the site's widget (and an unknown code)."""
        if channel == cls.Channel.WIDGET or channel not in cls.Channel.values:
            return ""
        return str(cls.Channel(channel).label)

    @property
    def bot_answers(self) -> bool:
        """While an operator is asked for or present, the bot stays silent."""
        return self.state == self.State.BOT


class Message(models.Model):
    class Role(models.TextChoices):
        VISITOR = "visitor", _("посетитель")
        BOT = "bot", _("бот")
        OPERATOR = "operator", _("оператор")
        SYSTEM = "system", _("система")

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages", verbose_name=_("разговор")
    )
    # Denormalised from the conversation so that every query can be scoped by bot directly.
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="messages", verbose_name=_("бот"))
    role = models.CharField(_("роль"), max_length=10, choices=Role.choices)
    text = models.TextField(_("текст"))
    intent = models.CharField(_("намерение"), max_length=32, blank=True)
    sources = models.JSONField(_("источники"), default=list, blank=True)
    source_entry_id = models.BigIntegerField(_("запись-источник"), null=True, blank=True)
    confidence = models.FloatField(_("уверенность"), null=True, blank=True)
    links = models.JSONField(_("ссылки"), default=list, blank=True)
    buttons = models.JSONField(_("кнопки"), default=list, blank=True)
    # Product cards under a bot answer: every price and availability copied from the catalog row by
    # code (commerce.products.card), never from a model's text.
    cards = models.JSONField(_("карточки товаров"), default=list, blank=True)
    rating = models.SmallIntegerField(_("оценка"), default=0, choices=[(-1, "👎"), (0, "—"), (1, "👍")])
    client_msg_id = models.CharField(verbose_name=_("номер сообщения у клиента"), max_length=64, blank=True)
    reply_to = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replies", verbose_name=_("ответ на")
    )
    flags = models.JSONField(_("отметки"), default=_empty_flags, blank=True)
    llm_meta = models.JSONField(verbose_name=_("данные модели"), default=dict, blank=True)
    # Who wrote an operator message (kept when the account is deleted: the name is in the transcript).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="chat_messages", verbose_name=_("автор"),
    )
    author_name = models.CharField(_("имя автора"), max_length=150, blank=True)
    created_at = models.DateTimeField(_("время"), auto_now_add=True)

    class Meta:
        verbose_name = _("сообщение")
        verbose_name_plural = _("сообщения")
        ordering = ["id"]
        indexes = [
            models.Index(fields=["conversation", "id"], name="message_conversation_id"),
            # The dashboard's thumbs-down count: a small partial index, only rated-down answers.
            models.Index(fields=["bot", "created_at"], condition=models.Q(rating=-1), name="message_bot_thumbs_down"),
            # The dashboard's «вопросов без ответа» as they happen: only the bot's no-answers.
            models.Index(fields=["bot", "created_at"], condition=models.Q(role="bot", flags__unanswered=True),
                         name="message_bot_unanswered"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "client_msg_id"], condition=~models.Q(client_msg_id=""),
                name="message_unique_client_msg_id",
            ),
            models.UniqueConstraint(
                fields=["reply_to"], condition=models.Q(role="bot"), name="message_one_bot_reply",
            ),
            models.CheckConstraint(condition=models.Q(rating__in=[-1, 0, 1]), name="message_rating_range"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"

    def flag(self, name: str) -> bool:
        return bool((self.flags or {}).get(name))


class ConversationRating(models.Model):
    """A visitor's stars (1–5) and optional words for a finished conversation (CSAT): one per
    conversation, written in chat/csat.py only. The operator who closed it is kept with it, by row
    and by name (the name stays when the account is deleted), for the owner's numbers per operator."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="conversation_ratings", verbose_name=_("бот"))
    conversation = models.OneToOneField(
        Conversation, on_delete=models.CASCADE, related_name="rating", verbose_name=_("разговор")
    )
    operator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="conversation_ratings", verbose_name=_("оператор"),
    )
    operator_name = models.CharField(_("имя оператора"), max_length=150, blank=True)
    stars = models.PositiveSmallIntegerField(_("звёзды"))
    comment = models.TextField(_("комментарий"), blank=True)
    created_at = models.DateTimeField(_("оценено"), auto_now_add=True)

    class Meta:
        verbose_name = _("оценка разговора")
        verbose_name_plural = _("оценки разговоров")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["bot", "created_at"], name="rating_bot_created")]
        constraints = [
            models.CheckConstraint(condition=models.Q(stars__gte=1, stars__lte=5), name="rating_stars_1_5"),
        ]

    def __str__(self) -> str:
        return f"#{self.conversation_id}: {self.stars}★"


class Lead(models.Model):
    """A visitor's contact left in the widget's form, with the consent they gave (152-FZ): the
    exact text shown, the policy it linked and when it was given."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="leads", verbose_name=_("бот"))
    conversation = models.ForeignKey(
        Conversation, on_delete=models.SET_NULL, null=True, blank=True, related_name="leads",
        verbose_name=_("разговор"),
    )
    visitor_id = models.CharField(_("посетитель"), max_length=64, validators=[visitor_id_validator])
    name = models.CharField(_("имя"), max_length=200)
    phone = models.CharField(_("телефон"), max_length=32, blank=True, help_text=_("В формате E.164."))
    email = models.EmailField(_("e-mail"), blank=True)
    question = models.TextField(_("вопрос"), blank=True)
    consent_text = models.TextField(_("текст согласия"))
    consent_policy_url = models.CharField(_("политика, с которой согласились"), max_length=500)
    consented_at = models.DateTimeField(_("согласие дано"))
    created_at = models.DateTimeField(_("оставлен"), auto_now_add=True)

    class Meta:
        verbose_name = _("контакт")
        verbose_name_plural = _("контакты")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["bot", "-created_at"], name="lead_bot_recent")]
        constraints = [
            models.CheckConstraint(condition=~models.Q(phone="", email=""), name="lead_phone_or_email"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.phone or self.email})"

    @property
    def contact(self) -> str:
        return self.phone or self.email


class WebhookDelivery(models.Model):
    """One event sent to the owner's webhook URL, with how its attempts went."""

    class Status(models.TextChoices):
        PENDING = "pending", _("отправляется")
        DELIVERED = "delivered", _("доставлено")
        FAILED = "failed", _("не доставлено")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="webhook_deliveries", verbose_name=_("бот"))
    event = models.CharField(_("событие"), max_length=64)
    url = models.CharField(_("адрес"), max_length=500)
    payload = models.JSONField(_("данные"))
    status = models.CharField(_("статус"), max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(_("попыток"), default=0)
    response_status = models.PositiveSmallIntegerField(_("код ответа"), null=True, blank=True)
    error = models.CharField(_("ошибка"), max_length=500, blank=True)
    # The same error untranslated (core/texts.py); null on deliveries written before it.
    error_stored = models.JSONField(_("ошибка для перевода"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("создано"), auto_now_add=True)
    delivered_at = models.DateTimeField(_("доставлено в"), null=True, blank=True)

    class Meta:
        verbose_name = _("уведомление (webhook)")
        verbose_name_plural = _("уведомления (webhook)")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["bot", "-created_at"], name="webhook_bot_recent")]

    def __str__(self) -> str:
        return f"{self.event} → {self.url} ({self.status})"

    @property
    def error_shown(self) -> str:
        return shown(self.error_stored) if self.error_stored else self.error


class OperatorPresence(models.Model):
    """Whether an operator can be given a conversation now: on hand unless they said «Отошёл(ла)»
    (`away`) or no inbox tab of theirs has been open for the bot's `away_after_minutes`
    (`seen_at`: the last time an open tab said so). Written by chat/presence.py only; the inbox's
    socket tells it (inbox/consumers.py), the handoff reads it (`services._handoff`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="operator_presence",
        verbose_name=_("оператор"),
    )
    away = models.BooleanField(_("отошёл (сам)"), default=False)
    seen_at = models.DateTimeField(_("входящие открыты в последний раз"), null=True, blank=True)
    assigned_at = models.DateTimeField(_("последний разговор по очереди"), null=True, blank=True)

    class Meta:
        verbose_name = _("присутствие оператора")
        verbose_name_plural = _("присутствие операторов")

    def __str__(self) -> str:
        return str(self.user)
