from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.models import Bot
from knowledge.catalog import services, validation
from knowledge.catalog.models import DEFAULT_NUMBER_PATTERN, OrderEndpoint


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _(
        "Подключить источник статусов заказов: orderendpoint SLUG URL_TEMPLATE [--header \"Имя: значение\"]… "
        "[--status /pointer] [--date /pointer] [--tracking /pointer] [--check НОМЕР]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("url_template", help=_("адрес с {number}, например https://shop.example/api/orders/{number}"))
        parser.add_argument("--header", action="append", default=None, metavar=_('"Имя: значение"'),
                            help=_("секретный заголовок (можно несколько); без --header сохранённые не меняются"))
        parser.add_argument("--clear-headers", action="store_true", help=_("удалить сохранённые заголовки"))
        parser.add_argument("--status", default="/status", help=_("JSON Pointer статуса (по умолчанию /status)"))
        parser.add_argument("--date", default="", help=_("JSON Pointer даты доставки"))
        parser.add_argument("--tracking", default="", help=_("JSON Pointer ссылки для отслеживания"))
        parser.add_argument("--phone", default="", help=_("JSON Pointer телефона покупателя (второй фактор)"))
        parser.add_argument("--email", default="", help=_("JSON Pointer e-mail покупателя (второй фактор)"))
        parser.add_argument("--pattern", default=DEFAULT_NUMBER_PATTERN, help=_("шаблон номера заказа (regex)"))
        parser.add_argument("--second-factor", action="store_true", help=_("спрашивать 4 цифры телефона или e-mail"))
        parser.add_argument("--disable", action="store_true", help=_("сохранить выключенным"))
        parser.add_argument("--check", default="", metavar=_("НОМЕР"), help=_("сразу проверить этим номером"))

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(_("Бот «%(slug)s» не найден.") % {"slug": options["slug"]})
        try:
            headers = None
            if options["clear_headers"]:
                headers = {}
            elif options["header"] is not None:
                headers = validation.parse_headers("\n".join(options["header"]))
            endpoint = services.order_endpoint_configure(
                bot=bot, url_template=options["url_template"], headers=headers, status_pointer=options["status"],
                date_pointer=options["date"], tracking_pointer=options["tracking"], phone_pointer=options["phone"],
                email_pointer=options["email"], number_pattern=options["pattern"],
                second_factor=options["second_factor"], enabled=not options["disable"],
                sample_number=options["check"],
            )
        except ValidationError as exc:
            raise CommandError(_messages(exc)) from exc
        names = ", ".join(endpoint.header_names) or _("нет")
        self.stdout.write(self.style.SUCCESS(
            _("Источник заказов для «%(slug)s» сохранён: %(url)s (заголовки: %(headers)s)") % {
                "slug": bot.slug, "url": endpoint.url_template, "headers": names}
        ))
        if options["check"]:
            self._check(endpoint, options["check"])

    def _check(self, endpoint: OrderEndpoint, number: str) -> None:
        fetched = services.order_endpoint_check(endpoint=endpoint, number=number, who="cli")
        line = _("Проверка %(number)s: %(outcome)s, код %(code)s, %(ms).0f мс") % {
            "number": number, "outcome": fetched.outcome, "code": fetched.http_status or "—",
            "ms": fetched.duration_ms}
        order = fetched.order
        if order is not None:
            day = order.delivery_date.isoformat() if order.delivery_date else order.date_text
            line += "; " + _("статус «%(status)s»") % {"status": order.status}
            line += (", " + _("дата %(day)s") % {"day": day}) if day else ""
            line += (", " + _("ссылка %(url)s") % {"url": order.tracking_url}) if order.tracking_url else ""
        if fetched.reason:
            line += f"; {fetched.reason}"
        if fetched.outcome == "unavailable":
            raise CommandError(line)
        self.stdout.write(line)


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
    return " ".join(exc.messages)
