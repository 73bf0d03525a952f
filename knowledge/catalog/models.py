"""The shop's own systems a bot reads: the order endpoint (one per bot) and the log of lookups.

What must stay true:
- Secret header values are stored only as a token (secrets.py) and never leave the server: the
  admin shows their names, never their values.
- A lookup row holds the number, the result and who asked, never the response body (it may carry
  a name, an address, a phone).
"""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from bots.models import Bot
from core.texts import shown

DEFAULT_NUMBER_PATTERN = r"\d{4,12}"
MAX_NUMBER = 64  # characters of an order number, as typed; longer is never sent anywhere


class OrderEndpoint(models.Model):
    bot = models.OneToOneField(Bot, on_delete=models.CASCADE, related_name="order_endpoint", verbose_name=_("бот"))
    enabled = models.BooleanField(_("включено"), default=True)
    url_template = models.CharField(
        _("адрес запроса"), max_length=500,
        help_text=_("Адрес с {number} на месте номера заказа, например https://shop.example/api/orders/{number}"),
    )
    headers_token = models.TextField(_("секретные заголовки (зашифрованы)"), blank=True, editable=False)
    header_names = models.JSONField(_("имена заголовков"), default=list, blank=True, editable=False)
    status_pointer = models.CharField(
        _("где статус"), max_length=200, default="/status",
        help_text=_("JSON Pointer, например /status или /order/state"),
    )
    date_pointer = models.CharField(
        _("где дата доставки"), max_length=200, blank=True, help_text=_("например /delivery/date")
    )
    tracking_pointer = models.CharField(
        _("где ссылка для отслеживания"), max_length=200, blank=True, help_text=_("например /tracking_url")
    )
    phone_pointer = models.CharField(
        _("где телефон покупателя"), max_length=200, blank=True,
        help_text=_("Для второго фактора: последние 4 цифры сверяются с этим полем; посетителю не показывается."),
    )
    email_pointer = models.CharField(
        _("где e-mail покупателя"), max_length=200, blank=True,
        help_text=_("Для второго фактора; посетителю не показывается."),
    )
    number_pattern = models.CharField(
        _("шаблон номера заказа"), max_length=100, default=DEFAULT_NUMBER_PATTERN,
        help_text=_("Регулярное выражение для номера в сообщении, например \\d{4,12} или [A-Z]{2}-\\d{6}"),
    )
    second_factor = models.BooleanField(
        _("спрашивать второй фактор"), default=False,
        help_text=_("Перед показом заказа спросить последние 4 цифры телефона или e-mail из заказа."),
    )
    sample_number = models.CharField(_("номер для проверки"), max_length=MAX_NUMBER, blank=True)
    created_at = models.DateTimeField(_("создано"), auto_now_add=True)
    updated_at = models.DateTimeField(_("изменено"), auto_now=True)

    class Meta:
        verbose_name = _("источник статусов заказов")
        verbose_name_plural = _("источники статусов заказов")

    def __str__(self) -> str:
        return f"{self.bot.slug}: {self.url_template}"


class OrderLookup(models.Model):
    class Result(models.TextChoices):
        FOUND = "found", _("найден")
        NOT_FOUND = "not_found", _("не найден")
        UNAVAILABLE = "unavailable", _("не проверить")
        FACTOR_MISMATCH = "factor_mismatch", _("второй фактор не совпал")
        LIMITED = "limited", _("слишком часто")
        BAD_NUMBER = "bad_number", _("не номер")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="order_lookups", verbose_name=_("бот"))
    number = models.CharField(_("номер"), max_length=MAX_NUMBER)
    result = models.CharField(_("результат"), max_length=16, choices=Result.choices)
    visitor_id = models.CharField(_("посетитель"), max_length=64, blank=True)
    ip = models.GenericIPAddressField(_("адрес"), null=True, blank=True)
    conversation_id = models.BigIntegerField(_("разговор"), null=True, blank=True)
    http_status = models.PositiveSmallIntegerField(_("код ответа"), null=True, blank=True)
    reason = models.CharField(_("причина"), max_length=300, blank=True)
    reason_stored = models.JSONField(_("причина для перевода"), null=True, blank=True, editable=False)
    duration_ms = models.FloatField(_("время, мс"), default=0.0)
    created_at = models.DateTimeField(_("время"), auto_now_add=True)

    class Meta:
        verbose_name = _("проверка заказа")
        verbose_name_plural = _("проверки заказов")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["bot", "-created_at"], name="orderlookup_bot_recent"),
            models.Index(fields=["bot", "number"], name="orderlookup_bot_number"),
        ]

    def __str__(self) -> str:
        return f"{self.number}: {self.result}"

    @property
    def reason_shown(self) -> str:
        return shown(self.reason_stored) if self.reason_stored else self.reason


def _weighted(weight: str, *fields: str) -> models.Func:
    """to_tsvector('russian') of `fields` (joined by spaces) with a weight, as a generated column
    may use it (an immutable expression, the configuration spelled out)."""
    return models.Func(
        *[models.F(name) for name in fields], arg_joiner=" || ' ' || ",
        template=f"setweight(to_tsvector('russian'::regconfig, %(expressions)s), '{weight}')",
        output_field=SearchVectorField(),
    )


class CatalogOffer(models.Model):
    """One offer of a catalog feed (Yandex Market YML or CSV), as the feed last said it. Every price
    and availability a visitor is shown comes from this row, never from a model."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="catalog_offers", verbose_name=_("бот"))
    source = models.ForeignKey("knowledge.Source", on_delete=models.CASCADE, related_name="offers",
                               verbose_name=_("каталог"))
    offer_id = models.CharField(_("id в фиде"), max_length=80)
    name = models.CharField(_("название"), max_length=500)
    price = models.DecimalField(_("цена"), max_digits=14, decimal_places=2)
    old_price = models.DecimalField(_("старая цена"), max_digits=14, decimal_places=2, null=True, blank=True)
    currency = models.CharField(_("валюта"), max_length=8, default="RUB")
    available = models.BooleanField(_("в наличии"), default=True)
    url = models.CharField(_("адрес"), max_length=2000, blank=True)
    picture = models.CharField(_("картинка"), max_length=2000, blank=True)
    category = models.CharField(_("категория"), max_length=300, blank=True)
    vendor = models.CharField(_("производитель"), max_length=200, blank=True)
    description = models.TextField(_("описание"), blank=True)
    params = models.JSONField(_("характеристики"), default=dict, blank=True)
    content_hash = models.CharField(verbose_name=_("хэш содержимого"), max_length=64)
    # Search by meaning (commerce/embedding.py): no fixed dimension, like knowledge.Entry.embedding;
    # cleared whenever the offer changes, filled behind the import on the embed queue.
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=64, blank=True)
    # Name first (A), then vendor and category (B), then the description (C): products.py ranks by it.
    search_vector = models.GeneratedField(
        verbose_name=_("поисковый индекс"),
        expression=models.Func(
            _weighted("A", "name"), _weighted("B", "vendor", "category"), _weighted("C", "description"),
            template="%(expressions)s", arg_joiner=" || ", output_field=SearchVectorField(),
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    updated_at = models.DateTimeField(_("обновлено"), auto_now=True)

    class Meta:
        verbose_name = _("товар")
        verbose_name_plural = _("товары")
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["source", "offer_id"], name="catalogoffer_one_per_feed")]
        indexes = [
            models.Index(fields=["bot", "price"], name="catalogoffer_bot_price"),
            GinIndex(fields=["search_vector"], name="catalogoffer_search_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.name} — {self.price} {self.currency}"


class CatalogImport(models.Model):
    """One import of a feed: what changed, what was refused, and why (in words for the owner)."""

    class Status(models.TextChoices):
        DONE = "done", _("загружен")
        FAILED = "failed", _("не загружен")

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="catalog_imports", verbose_name=_("бот"))
    source = models.ForeignKey("knowledge.Source", on_delete=models.CASCADE, related_name="catalog_imports",
                               verbose_name=_("каталог"))
    status = models.CharField(_("итог"), max_length=8, choices=Status.choices)
    added = models.PositiveIntegerField(_("добавлено"), default=0)
    changed = models.PositiveIntegerField(_("изменено"), default=0)
    removed = models.PositiveIntegerField(_("удалено"), default=0)
    skipped = models.PositiveIntegerField(_("пропущено"), default=0)
    scheduled = models.BooleanField(_("по расписанию"), default=False)
    message = models.CharField(_("сообщение"), max_length=500, blank=True)
    # The message untranslated (core/texts.py); null on rows written before, shown as `message`.
    message_stored = models.JSONField(_("сообщение для перевода"), null=True, blank=True, editable=False)
    # First few skipped offers with reasons: stored texts (plain strings on rows written before them).
    problems = models.JSONField(_("замечания"), default=list, blank=True)
    duration_ms = models.FloatField(_("время, мс"), default=0.0)
    created_at = models.DateTimeField(_("время"), auto_now_add=True)

    class Meta:
        verbose_name = _("загрузка каталога")
        verbose_name_plural = _("загрузки каталога")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.source_id}: +{self.added} ~{self.changed} −{self.removed}"

    @property
    def message_shown(self) -> str:
        return shown(self.message_stored) if self.message_stored else self.message

    @property
    def problems_shown(self) -> list[str]:
        return [shown(problem) for problem in self.problems or []]
