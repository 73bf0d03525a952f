"""The tenant: one Bot per website. Everything else in Spravka belongs to exactly one Bot."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from assistant.validators import WebAddressFields, validate_origins, validate_web_url

# Calibrated on demo/cases.jsonl (answered-right 0.91, refusal 0.94 at 0.48); see docs/search.md.
DEFAULT_MATCH = 0.48
DEFAULT_CONFIDENCE = 0.67
DEFAULT_FIX_BONUS = 0.06


def new_public_key() -> str:
    return secrets.token_urlsafe(18)


_unit = [MinValueValidator(0.0), MaxValueValidator(1.0)]


class Bot(WebAddressFields):
    web_address_fields = {"site_url": validate_web_url, "allowed_origins": validate_origins}

    class Language(models.TextChoices):
        RU = "ru", _("Русский")
        EN = "en", _("English")

    name = models.CharField(_("название"), max_length=200)
    slug = models.SlugField(_("код"), max_length=64, unique=True)
    site_url = models.URLField(_("адрес сайта"), max_length=500, blank=True)
    language = models.CharField(_("язык"), max_length=2, choices=Language.choices, default=Language.RU)
    timezone = models.CharField(_("часовой пояс"), max_length=64, default="Europe/Moscow")
    public_key = models.CharField(_("ключ виджета"), max_length=64, unique=True, default=new_public_key)
    allowed_origins = models.JSONField(
        _("разрешённые источники виджета"), default=list, blank=True,
        help_text=_("Адреса сайтов (https://example.ru), на которых может работать виджет."),
    )
    handoff_enabled = models.BooleanField(_("передача оператору"), default=True)
    match_threshold = models.FloatField(_("порог совпадения"), default=DEFAULT_MATCH, validators=_unit)
    confidence_threshold = models.FloatField(
        _("порог уверенности"), default=DEFAULT_CONFIDENCE, validators=_unit
    )
    fix_bonus = models.FloatField(_("перевес поправки"), default=DEFAULT_FIX_BONUS, validators=_unit)
    created_at = models.DateTimeField(auto_now_add=True)

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

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("роль"), max_length=16, choices=Role.choices, default=Role.OWNER)

    class Meta:
        verbose_name = _("участник")
        verbose_name_plural = _("участники")
        constraints = [models.UniqueConstraint(fields=["bot", "user"], name="membership_unique_bot_user")]

    def __str__(self) -> str:
        return f"{self.user} → {self.bot} ({self.role})"
