from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.services import bot_create


class Command(BaseCommand):
    help = "Создать бота для сайта: createbot SLUG --site URL [--owner EMAIL]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--site", required=True, help="адрес сайта, например https://shop.example/")
        parser.add_argument("--owner", default="", help="e-mail владельца (получит доступ к админке)")
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot, password = bot_create(
                slug=options["slug"], site_url=options["site"], name=options["name"], owner_email=options["owner"]
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(self.style.SUCCESS(f"Бот «{bot.slug}» создан. Ключ виджета: {bot.public_key}"))
        if password:
            self.stdout.write(f"Владелец: {options['owner']} / пароль: {password}")
