"""`manage.py apikey SLUG --name NAME` makes a key for the bot's REST API and prints it (once: only
its hash is stored); `--revoke PREFIX` revokes one; `--list` shows the bot's keys."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from bots.apikeys import ApiKeyNotFound, api_key_create, api_key_revoke
from bots.exceptions import BotNotFound
from bots.models import ApiKey
from bots.selectors import bot_by_slug


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Ключи REST API бота: apikey SLUG --name NAME | --revoke PREFIX | --list")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help=_("код бота"))
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--name", help=_("создать ключ с этим названием (для кого он), ключ печатается один раз"))
        group.add_argument("--revoke", metavar="PREFIX", help=_("отозвать ключ по его началу (spr_xxxxxxxxxx)"))
        group.add_argument("--list", action="store_true", help=_("показать ключи бота"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
            if options["list"]:
                self._list(bot.api_keys.all())
            elif options["revoke"] is not None:
                row = api_key_revoke(bot=bot, prefix=options["revoke"])
                self.stdout.write(self.style.SUCCESS(
                    _("Ключ spr_%(prefix)s… («%(name)s») отозван.") % {"prefix": row.prefix, "name": row.name}))
            else:
                row, key = api_key_create(bot=bot, name=options["name"])
                self.stderr.write(_("Ключ «%(name)s» для бота «%(slug)s». Сохраните его: он показан один раз.") % {
                    "name": row.name, "slug": bot.slug})
                self.stdout.write(key)
        except (BotNotFound, ApiKeyNotFound) as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc

    def _list(self, keys: Any) -> None:
        rows: list[ApiKey] = list(keys)
        if not rows:
            self.stdout.write(_("У бота нет ключей API. Создайте: apikey SLUG --name NAME"))
        for row in rows:
            state = _("отозван %(when)s") % {"when": when(row.revoked_at)} if row.revoked_at else _("действует")
            used = when(row.last_used_at) if row.last_used_at else _("не использовался")
            self.stdout.write(_("spr_%(prefix)s…  %(name)s  %(state)s; последний запрос: %(used)s") % {
                "prefix": row.prefix, "name": row.name, "state": state, "used": used})


def when(moment: Any) -> str:
    return formats.date_format(timezone.localtime(moment), "SHORT_DATETIME_FORMAT")
