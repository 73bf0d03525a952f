from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from core.texts import shown
from messengers import services
from messengers.models import Connection


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Подключить бота к мессенджеру: channel SLUG telegram --token TOKEN; отключить: --disconnect")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help=_("код бота"))
        parser.add_argument("messenger", choices=[Connection.Kind.TELEGRAM], help=_("мессенджер: telegram"))
        parser.add_argument("--token", default="", help=_("токен бота от @BotFather"))
        parser.add_argument("--disconnect", action="store_true", help=_("отключить и забыть токен"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        if options["disconnect"]:
            connection = Connection.objects.filter(bot=bot, kind=options["messenger"]).first()
            if connection is None:
                raise CommandError(_("Бот «%(slug)s» не подключён к этому мессенджеру.") % {"slug": bot.slug})
            services.connection_disconnect(connection=connection)
            self.stdout.write(self.style.SUCCESS(_("Отключено: токен забыт, обновления больше не принимаются.")))
            return
        if not options["token"]:
            raise CommandError(_("Нужен токен: --token 123456789:AAE… (его выдаёт @BotFather)."))
        try:
            connection = services.telegram_connect(bot=bot, token=options["token"])
        except services.ConnectFailed as exc:
            raise CommandError(shown(exc.stored)) from exc
        self.stdout.write(self.style.SUCCESS(_("Подключён @%(name)s. Адрес для обновлений: %(url)s") % {
            "name": connection.account_name, "url": connection.webhook_url}))
