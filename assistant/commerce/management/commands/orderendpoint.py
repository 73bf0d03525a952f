from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.models import Bot
from assistant.commerce import services, validation
from assistant.commerce.models import DEFAULT_NUMBER_PATTERN, OrderEndpoint


class Command(BaseCommand):
    help = (
        "Подключить источник статусов заказов: orderendpoint SLUG URL_TEMPLATE [--header \"Имя: значение\"]… "
        "[--status /pointer] [--date /pointer] [--tracking /pointer] [--check НОМЕР]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("url_template", help="адрес с {number}, например https://shop.example/api/orders/{number}")
        parser.add_argument("--header", action="append", default=None, metavar='"Имя: значение"',
                            help="секретный заголовок (можно несколько); без --header сохранённые не меняются")
        parser.add_argument("--clear-headers", action="store_true", help="удалить сохранённые заголовки")
        parser.add_argument("--status", default="/status", help="JSON Pointer статуса (по умолчанию /status)")
        parser.add_argument("--date", default="", help="JSON Pointer даты доставки")
        parser.add_argument("--tracking", default="", help="JSON Pointer ссылки для отслеживания")
        parser.add_argument("--phone", default="", help="JSON Pointer телефона покупателя (второй фактор)")
        parser.add_argument("--email", default="", help="JSON Pointer e-mail покупателя (второй фактор)")
        parser.add_argument("--pattern", default=DEFAULT_NUMBER_PATTERN, help="шаблон номера заказа (regex)")
        parser.add_argument("--second-factor", action="store_true", help="спрашивать 4 цифры телефона или e-mail")
        parser.add_argument("--disable", action="store_true", help="сохранить выключенным")
        parser.add_argument("--check", default="", metavar="НОМЕР", help="сразу проверить этим номером")

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(f"Бот «{options['slug']}» не найден.")
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
        names = ", ".join(endpoint.header_names) or "нет"
        self.stdout.write(self.style.SUCCESS(
            f"Источник заказов для «{bot.slug}» сохранён: {endpoint.url_template} (заголовки: {names})"
        ))
        if options["check"]:
            self._check(endpoint, options["check"])

    def _check(self, endpoint: OrderEndpoint, number: str) -> None:
        fetched = services.order_endpoint_check(endpoint=endpoint, number=number, who="cli")
        line = f"Проверка {number}: {fetched.outcome}, код {fetched.http_status or '—'}, {fetched.duration_ms:.0f} мс"
        order = fetched.order
        if order is not None:
            day = order.delivery_date.isoformat() if order.delivery_date else order.date_text
            line += f"; статус «{order.status}»" + (f", дата {day}" if day else "")
            line += f", ссылка {order.tracking_url}" if order.tracking_url else ""
        if fetched.reason:
            line += f"; {fetched.reason}"
        if fetched.outcome == "unavailable":
            raise CommandError(line)
        self.stdout.write(line)


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
    return " ".join(exc.messages)
