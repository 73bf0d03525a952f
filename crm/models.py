"""A bot's CRM (amoCRM or Bitrix24) and the leads sent to it.

What must stay true:
- A bot has at most one CRM connection; its key (amoCRM's long-lived token, Bitrix24's webhook
  address, which holds the secret code) is stored sealed (core/secrets.py), and only its last four
  characters are ever shown again.
- A lead goes to one CRM account at most once: a `CrmDelivery` is unique per lead and account, and
  the CRM's lead number is saved on it as soon as the CRM answers, so a retry after a failed second
  step (the transcript's note) never creates the lead again.
- A delivery belongs to its lead: erasing a visitor (152-FZ) erases what was queued for the CRM too.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from bots.models import Bot
from chat.models import Lead
from core.texts import shown


class Kind(models.TextChoices):
    AMOCRM = "amocrm", "amoCRM"
    BITRIX24 = "bitrix24", _("Битрикс24")


class CrmConnection(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("подключена")
        FAILING = "failing", _("ошибка отправки")
        DISCONNECTED = "disconnected", _("не подключена")

    bot = models.OneToOneField(Bot, on_delete=models.CASCADE, related_name="crm_connection", verbose_name=_("бот"))
    kind = models.CharField(_("CRM"), max_length=16, choices=Kind.choices)
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # amoCRM: the account's address (https://company.amocrm.ru); Bitrix24: the webhook's address
    # without its secret code (https://portal.bitrix24.ru/rest/1/). Leads are matched per account.
    account = models.CharField(_("аккаунт"), max_length=300)
    account_name = models.CharField(_("название аккаунта"), max_length=200, blank=True)
    secret_sealed = models.TextField(_("ключ (зашифрован)"), blank=True, editable=False)
    secret_hint = models.CharField(_("ключ"), max_length=16, blank=True, help_text=_("Последние знаки ключа."))
    last_error = models.CharField(_("последняя ошибка"), max_length=500, blank=True)
    last_error_stored = models.JSONField(_("ошибка для перевода"), null=True, blank=True, editable=False)
    last_error_at = models.DateTimeField(_("когда"), null=True, blank=True)
    checked_at = models.DateTimeField(_("проверена"), null=True, blank=True)
    connected_at = models.DateTimeField(_("подключена"), null=True, blank=True)
    updated_at = models.DateTimeField(_("изменена"), auto_now=True)

    class Meta:
        verbose_name = _("подключение CRM")
        verbose_name_plural = _("подключения CRM")

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.account_name or self.account}"

    @property
    def working(self) -> bool:
        return self.status != self.Status.DISCONNECTED

    @property
    def error_shown(self) -> str:
        return shown(self.last_error_stored) if self.last_error_stored else self.last_error


class CrmDelivery(models.Model):
    """One lead sent to the bot's CRM: a new CRM lead with the contact and the transcript, or, for a
    contact the CRM has a lead of already, the transcript added to that lead as a note."""

    class Status(models.TextChoices):
        PENDING = "pending", _("ждёт отправки")
        SENDING = "sending", _("отправляется")
        DELIVERED = "delivered", _("доставлено")
        FAILED = "failed", _("не доставлено")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="crm_deliveries", verbose_name=_("бот"))
    lead = models.ForeignKey(Lead, on_delete=models.CASCADE, related_name="crm_deliveries", verbose_name=_("контакт"))
    kind = models.CharField(_("CRM"), max_length=16, choices=Kind.choices)
    account = models.CharField(_("аккаунт"), max_length=300)
    transcript = models.TextField(_("переписка"), blank=True)
    status = models.CharField(_("статус"), max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(_("попыток"), default=0)
    response_status = models.PositiveSmallIntegerField(_("код ответа"), null=True, blank=True)
    error = models.CharField(_("ошибка"), max_length=500, blank=True)
    error_stored = models.JSONField(_("ошибка для перевода"), null=True, blank=True, editable=False)
    crm_lead_id = models.CharField(_("номер сделки в CRM"), max_length=32, blank=True)
    # True when the transcript went to a lead the CRM had of this contact already (no new lead).
    attached = models.BooleanField(_("добавлено к прежней сделке"), default=False)
    # The transcript is in the CRM (a note, or the lead's comment): the delivery's second step done.
    transcript_sent = models.BooleanField(_("переписка отправлена"), default=False)
    claimed_at = models.DateTimeField(_("взято в отправку"), null=True, blank=True)
    created_at = models.DateTimeField(_("создано"), auto_now_add=True)
    delivered_at = models.DateTimeField(_("доставлено в"), null=True, blank=True)

    class Meta:
        verbose_name = _("отправка в CRM")
        verbose_name_plural = _("отправки в CRM")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["bot", "-created_at"], name="crm_delivery_recent"),
            models.Index(fields=["bot", "account", "status"], name="crm_delivery_account"),
        ]
        constraints = [models.UniqueConstraint(fields=["lead", "account"], name="crm_delivery_once")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.lead_id} ({self.status})"

    @property
    def error_shown(self) -> str:
        return shown(self.error_stored) if self.error_stored else self.error
