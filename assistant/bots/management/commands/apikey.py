"""`manage.py apikey SLUG --name NAME` makes a key for the bot's REST API and prints it (once: only
its hash is stored); `--revoke PREFIX` revokes one; `--list` shows the bot's keys."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.apikeys import ApiKeyNotFound, api_key_create, api_key_revoke
from assistant.bots.exceptions import BotNotFound
from assistant.bots.models import ApiKey
from assistant.bots.selectors import bot_by_slug


class Command(BaseCommand):
    help = "Ключи REST API бота: apikey SLUG --name NAME | --revoke PREFIX | --list"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="код бота")
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--name", help="создать ключ с этим названием (для кого он), ключ печатается один раз")
        group.add_argument("--revoke", metavar="PREFIX", help="отозвать ключ по его началу (spr_xxxxxxxxxx)")
        group.add_argument("--list", action="store_true", help="показать ключи бота")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
            if options["list"]:
                self._list(bot.api_keys.all())
            elif options["revoke"] is not None:
                row = api_key_revoke(bot=bot, prefix=options["revoke"])
                self.stdout.write(self.style.SUCCESS(f"Ключ spr_{row.prefix}… («{row.name}») отозван."))
            else:
                row, key = api_key_create(bot=bot, name=options["name"])
                self.stderr.write(f"Ключ «{row.name}» для бота «{bot.slug}». Сохраните его: он показан один раз.")
                self.stdout.write(key)
        except (BotNotFound, ApiKeyNotFound) as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc

    def _list(self, keys: Any) -> None:
        rows: list[ApiKey] = list(keys)
        if not rows:
            self.stdout.write("У бота нет ключей API. Создайте: apikey SLUG --name NAME")
        for row in rows:
            state = f"отозван {row.revoked_at:%d.%m.%Y %H:%M}" if row.revoked_at else "действует"
            used = f"{row.last_used_at:%d.%m.%Y %H:%M}" if row.last_used_at else "не использовался"
            self.stdout.write(f"spr_{row.prefix}…  {row.name}  {state}; последний запрос: {used}")
