from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.services import bot_create


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Создать бота для сайта: createbot SLUG --site URL [--owner EMAIL]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--site", required=True, help=_("адрес сайта, например https://shop.example/"))
        parser.add_argument("--owner", default="", help=_("e-mail владельца (получит доступ к админке)"))
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot, password = bot_create(
                slug=options["slug"], site_url=options["site"], name=options["name"], owner_email=options["owner"]
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(self.style.SUCCESS(
            _("Бот «%(slug)s» создан. Ключ виджета: %(key)s") % {"slug": bot.slug, "key": bot.public_key}))
        if password:
            self.stdout.write(_("Владелец: %(email)s / пароль: %(password)s") % {"email": options["owner"],
                                                                               "password": password})
