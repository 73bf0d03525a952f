"""The tenant: one Bot per website. Everything else in Spravka belongs to exactly one Bot."""

from __future__ import annotations

import secrets
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.validators import WebAddressFields, validate_origins, validate_web_url

# Calibrated on demo/cases.jsonl (answered-right 0.91, refusal 0.94 at 0.485, with FAQ chunks and
# headings in the score); see docs/search.md.
DEFAULT_MATCH = 0.485
DEFAULT_CONFIDENCE = 0.67
DEFAULT_FIX_BONUS = 0.06


def new_public_key() -> str:
    return secrets.token_urlsafe(18)


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


def validate_timezone(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValidationError(
            _("Неизвестный часовой пояс «%(value)s». Пример: Europe/Moscow."), params={"value": value}
        ) from exc


_unit = [MinValueValidator(0.0), MaxValueValidator(1.0)]
_web_url = [URLValidator(schemes=["http", "https"])]
_minutes = [MinValueValidator(1), MaxValueValidator(24 * 60)]


class Bot(WebAddressFields):
    web_address_fields = {"site_url": validate_web_url, "allowed_origins": validate_origins}

    class Language(models.TextChoices):
        RU = "ru", _("Русский")
        EN = "en", _("English")

    class Assignment(models.TextChoices):
        FIRST = "first", _("кто первым возьмёт")
        IN_TURN = "in_turn", _("по очереди операторам на месте")

    name = models.CharField(_("название"), max_length=200)
    slug = models.SlugField(_("код"), max_length=64, unique=True)
    site_url = models.URLField(_("адрес сайта"), max_length=500, blank=True)
    language = models.CharField(_("язык"), max_length=2, choices=Language.choices, default=Language.RU)
    answers_in_visitor_language = models.BooleanField(
        _("отвечать на языке посетителя"), default=True,
        help_text=_("Вопрос по-английски получает ответ по-английски, по-русски — по-русски."),
    )
    timezone = models.CharField(
        _("часовой пояс"), max_length=64, default="Europe/Moscow", validators=[validate_timezone],
        help_text=_("По нему считаются часы работы операторов, например Europe/Moscow."),
    )
    public_key = models.CharField(_("ключ виджета"), max_length=64, unique=True, default=new_public_key)
    allowed_origins = models.JSONField(
        _("разрешённые источники виджета"), default=list, blank=True,
        help_text=_("Адреса сайтов (https://example.ru), на которых может работать виджет."),
    )
    handoff_enabled = models.BooleanField(_("передача оператору"), default=True)
    visitor_choice = models.BooleanField(
        _("предлагать выбор до первого сообщения"), default=False,
        help_text=_("Пока посетитель ничего не написал, виджет показывает две кнопки: «Спросить бота» и "
                    "«Написать оператору». Только когда передача оператору включена и операторы на месте."),
    )
    review_by_operators = models.BooleanField(
        _("операторы проверяют ответы"), default=False,
        help_text=_("Операторы бота тоже видят очередь проверки ответов и пробелы в знаниях."),
    )
    # The three numbers of the search (knowledge/search.py), named and explained as an owner reads
    # them: the admin's form, the experiments and testing pages take both texts from here.
    match_threshold = models.FloatField(
        _("насколько уверенным должен быть бот, чтобы ответить (порог совпадения)"), default=DEFAULT_MATCH,
        validators=_unit,
        help_text=_("Число от 0 до 1. Бот отвечает, только если нашёл в знаниях запись, подходящую к вопросу не "
                    "меньше этого; иначе говорит «нет точного ответа» и предлагает оператора. Больше — отвечает "
                    "реже, но точнее; меньше — чаще, но может ответить не на тот вопрос."),
    )
    confidence_threshold = models.FloatField(
        _("ниже какой уверенности ответ идёт на проверку (порог уверенности)"), default=DEFAULT_CONFIDENCE,
        validators=_unit,
        help_text=_("Число от 0 до 1. Посетитель получает и такой ответ, но он попадает в «Очередь проверки», "
                    "где вы подтверждаете или исправляете его. Больше — на проверку уходит больше ответов."),
    )
    fix_bonus = models.FloatField(
        _("насколько ваши исправления важнее страниц сайта (перевес поправки)"), default=DEFAULT_FIX_BONUS,
        validators=_unit,
        help_text=_("Прибавка к оценке вашего исправления, когда спрашивают тот же вопрос или его перефразировку: "
                    "так исправление побеждает страницу, на которой бот ошибся. 0 — без прибавки."),
    )
    # --- operators: alerts, leads, webhooks, escalation (assistant/behavior, assistant/inbox) ---
    operator_alert_minutes = models.PositiveSmallIntegerField(
        _("напомнить операторам через, мин"), default=2, validators=_minutes,
        help_text=_("Если разговор ждёт оператора дольше, операторам бота уходит письмо."),
    )
    lead_offer_minutes = models.PositiveSmallIntegerField(
        _("предложить оставить контакт через, мин"), default=5, validators=_minutes,
        help_text=_(
            "Если за это время никто из операторов не взял разговор, посетителю предлагается оставить контакт."
        ),
    )
    operator_sla_minutes = models.PositiveSmallIntegerField(
        _("первый ответ оператора в течение, мин"), default=5, validators=[MaxValueValidator(1440)],
        help_text=_("Разговор, который ждёт оператора дольше, во «Входящих» отмечен как просроченный. 0 — без срока."),
    )
    csat_after_bot = models.BooleanField(
        _("просить оценку и после разговоров, решённых ботом"), default=False,
        help_text=_("После разговора с оператором посетителя всегда просят оценить его от 1 до 5. С этой "
                    "отметкой — и после разговора, на который бот ответил сам: он завершается, когда затих."),
    )
    assignment = models.CharField(
        _("как распределять разговоры"), max_length=16, choices=Assignment.choices, default=Assignment.FIRST,
        help_text=_("«По очереди» отдаёт каждый новый разговор следующему оператору на месте, пропуская тех, у "
                    "кого уже предел открытых разговоров. «Кто первым возьмёт» — разговор ждёт, пока его возьмут."),
    )
    operator_open_limit = models.PositiveSmallIntegerField(
        _("открытых разговоров у оператора, не больше"), default=5, validators=[MinValueValidator(1),
                                                                               MaxValueValidator(100)],
        help_text=_("При распределении по очереди оператор с таким числом открытых разговоров пропускается."),
    )
    away_after_minutes = models.PositiveSmallIntegerField(
        _("оператор «отошёл», если входящие закрыты дольше, мин"), default=5,
        validators=[MinValueValidator(2), MaxValueValidator(240)],
        help_text=_("Кто закрыл все вкладки входящих, через столько минут не получает разговоров. Если на месте "
                    "никого нет, посетителю сразу предлагают оставить контакт."),
    )
    privacy_policy_url = models.URLField(
        _("политика обработки персональных данных"), max_length=500, blank=True, validators=_web_url,
        help_text=_("Ссылка в форме «Оставить контакт»: без согласия с ней (152-ФЗ) контакт не принимается."),
    )
    webhook_url = models.URLField(
        _("адрес для уведомлений (webhook)"), max_length=500, blank=True, validators=_web_url,
        help_text=_("Сюда приходят события handoff.waiting, handoff.taken, conversation.closed, lead.created."),
    )
    webhook_secret = models.CharField(
        _("секрет подписи уведомлений"), max_length=64, default=new_webhook_secret,
        help_text=_("Тело запроса подписано HMAC-SHA256 этим секретом, подпись — в заголовке X-Spravka-Signature."),
    )
    retention_days = models.PositiveSmallIntegerField(
        _("хранить переписку и контакты, дней"), default=365,
        validators=[MinValueValidator(1), MaxValueValidator(3650)],
    )
    escalate_on_thumbs_down = models.BooleanField(_("предлагать оператора после «не помогло»"), default=True)
    escalate_on_complaint = models.BooleanField(_("предлагать оператора после «нет, не то»"), default=True)
    escalate_on_rephrase = models.BooleanField(
        _("предлагать оператора, когда вопрос переспрашивают дважды"), default=True
    )
    escalate_on_no_answers = models.BooleanField(
        _("предлагать оператора после двух «нет точного ответа» подряд"), default=True
    )
    # The Voice layer's settings (sliders, dictionary, «условия», canned replies, a running A/B
    # experiment's variant): decided only by voice/services.py and stored by bots/services.py
    # (bot_voice_set), read with the bot row so a chat turn costs no extra query. Its shape and
    # validation live in voice/.
    voice = models.JSONField(_("голос"), default=dict, blank=True, editable=False)
    # --- usage and costs (llm/budget.py): over the month's budget the bot answers from
    # the knowledge base only, without the model; the owners get one e-mail per month about it ---
    monthly_budget_usd = models.DecimalField(
        _("бюджет на модель в месяц, $"), max_digits=10, decimal_places=2, null=True, blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("Оценка расходов на модель считается в долларах, как в строках расхода. "
                    "Пусто — без ограничения."),
    )
    budget_alerted_month = models.CharField(
        _("письмо о бюджете отправлено за месяц"), max_length=7, blank=True, default="", editable=False,
    )
    created_at = models.DateTimeField(verbose_name=_("создан"), auto_now_add=True)

    class Meta:
        verbose_name = _("бот")
        verbose_name_plural = _("боты")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", _("владелец")
        OPERATOR = "operator", _("оператор")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("учётная запись"),
        on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("роль"), max_length=16, choices=Role.choices, default=Role.OWNER)

    class Meta:
        verbose_name = _("участник")
        verbose_name_plural = _("участники")
        constraints = [models.UniqueConstraint(fields=["bot", "user"], name="membership_unique_bot_user")]

    def __str__(self) -> str:
        return f"{self.user} → {self.bot} ({self.role})"


class OpeningHours(models.Model):
    """When operators answer: one row per working interval of a weekday, in the bot's time zone.
    A bot without rows has operators at any time."""

    class Weekday(models.IntegerChoices):
        MONDAY = 0, _("понедельник")
        TUESDAY = 1, _("вторник")
        WEDNESDAY = 2, _("среда")
        THURSDAY = 3, _("четверг")
        FRIDAY = 4, _("пятница")
        SATURDAY = 5, _("суббота")
        SUNDAY = 6, _("воскресенье")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="opening_hours")
    weekday = models.PositiveSmallIntegerField(_("день недели"), choices=Weekday.choices)
    opens = models.TimeField(_("с"))
    closes = models.TimeField(_("до"))

    class Meta:
        verbose_name = _("часы работы операторов")
        verbose_name_plural = _("часы работы операторов")
        ordering = ["weekday", "opens"]
        constraints = [
            models.CheckConstraint(condition=models.Q(closes__gt=models.F("opens")), name="opening_hours_order"),
        ]

    def __str__(self) -> str:
        return f"{self.get_weekday_display()} {self.opens:%H:%M}–{self.closes:%H:%M}"

    def clean(self) -> None:
        if self.opens is not None and self.closes is not None and self.closes <= self.opens:
            raise ValidationError(_("Время окончания должно быть позже начала."))


class Holiday(models.Model):
    """A day without operators, whatever the weekly schedule says."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="holidays")
    date = models.DateField(_("дата"))
    name = models.CharField(_("название"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("выходной день")
        verbose_name_plural = _("выходные дни")
        ordering = ["date"]
        constraints = [models.UniqueConstraint(fields=["bot", "date"], name="holiday_unique_bot_date")]

    def __str__(self) -> str:
        return f"{self.date:%d.%m.%Y} {self.name}".strip()


class ApiKey(models.Model):
    """A key another system uses for the bot's REST API (/api/v1/). Only a hash of the key is stored:
    the key itself is shown once, when it is made, and cannot be read back. `prefix` (public, in
    the key) finds the row; the hash proves the rest. Revoked keys are kept, for the record."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="api_keys", verbose_name=_("бот"))
    name = models.CharField(_("название"), max_length=100, help_text=_("Для кого ключ, например «1С» или «CRM»."))
    prefix = models.CharField(_("начало ключа"), max_length=16, unique=True, editable=False)
    key_hash = models.CharField(verbose_name=_("хэш ключа"), max_length=64, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("кто создал"), editable=False,
    )
    created_at = models.DateTimeField(_("создан"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("последний запрос"), null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(_("отозван"), null=True, blank=True, editable=False)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("кто отозвал"), editable=False,
    )

    class Meta:
        verbose_name = _("ключ API")
        verbose_name_plural = _("ключи API")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class Invitation(models.Model):
    """An invitation to become an owner or operator of a bot, sent by e-mail as a signed link that
    expires (settings.INVITE_MAX_AGE_DAYS) and works once. The row says who invited whom and what
    became of it; the link itself is not stored (it is the row's id, signed with SECRET_KEY)."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="invitations", verbose_name=_("бот"))
    email = models.EmailField(_("e-mail"))
    role = models.CharField(_("роль"), max_length=16, choices=Membership.Role.choices)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("кто пригласил"),
    )
    created_at = models.DateTimeField(_("отправлено"), auto_now_add=True)
    accepted_at = models.DateTimeField(_("принято"), null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("кто принял"),
    )
    revoked_at = models.DateTimeField(_("отозвано"), null=True, blank=True)

    class Meta:
        verbose_name = _("приглашение")
        verbose_name_plural = _("приглашения")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} → {self.bot} ({self.role})"

    @property
    def pending(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None
