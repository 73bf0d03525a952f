from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.models import Bot
from bots.selectors import bot_by_slug
from core.texts import shown
from messengers import services
from messengers.models import Connection


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Подключить бота к мессенджеру: channel SLUG telegram --token TOKEN; channel SLUG vk --token TOKEN "
             "--confirmation CODE --secret SECRET; channel SLUG max --token TOKEN; отключить: --disconnect")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help=_("код бота"))
        parser.add_argument("messenger", choices=[Connection.Kind.TELEGRAM, Connection.Kind.VK, Connection.Kind.MAX],
                            help=_("мессенджер: telegram, vk или max"))
        parser.add_argument("--token", default="",
                            help=_("токен бота от @BotFather, ключ доступа сообщества ВКонтакте или токен бота MAX"))
        parser.add_argument("--confirmation", default="",
                            help=_("ВКонтакте: строка, которую должен вернуть сервер (настройки Callback API)"))
        parser.add_argument("--secret", default="", help=_("ВКонтакте: секретный ключ из настроек Callback API"))
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
        if options["messenger"] == Connection.Kind.VK:
            self._vk(bot, options)
            return
        if options["messenger"] == Connection.Kind.MAX:
            self._max(bot, options)
            return
        if not options["token"]:
            raise CommandError(_("Нужен токен: --token 123456789:AAE… (его выдаёт @BotFather)."))
        try:
            connection = services.telegram_connect(bot=bot, token=options["token"])
        except services.ConnectFailed as exc:
            raise CommandError(shown(exc.stored)) from exc
        self.stdout.write(self.style.SUCCESS(_("Подключён @%(name)s. Адрес для обновлений: %(url)s") % {
            "name": connection.account_name, "url": connection.webhook_url}))

    def _vk(self, bot: Bot, options: dict[str, Any]) -> None:
        if not (options["token"] and options["confirmation"] and options["secret"]):
            raise CommandError(_("Нужны ключ доступа сообщества, строка подтверждения и секретный ключ: "
                                 "--token vk1.a.… --confirmation 1a2b3c4d --secret …"))
        try:
            connection = services.vk_connect(bot=bot, token=options["token"], confirmation=options["confirmation"],
                                             secret=options["secret"])
        except services.ConnectFailed as exc:
            raise CommandError(shown(exc.stored)) from exc
        self.stdout.write(self.style.SUCCESS(_(
            "Подключено сообщество «%(name)s». Вставьте этот адрес в «Управление → Работа с API → Callback API» "
            "и нажмите «Подтвердить»: %(url)s") % {"name": connection.account_name, "url": connection.webhook_url}))

    def _max(self, bot: Bot, options: dict[str, Any]) -> None:
        if not options["token"]:
            raise CommandError(_("Нужен токен бота MAX: --token … (business.max.ru: «Чат-боты» → ⋮ → «Настройки»)."))
        try:
            connection = services.max_connect(bot=bot, token=options["token"])
        except services.ConnectFailed as exc:
            raise CommandError(shown(exc.stored)) from exc
        self.stdout.write(self.style.SUCCESS(_("Подключён бот MAX «%(name)s». Адрес для обновлений: %(url)s") % {
            "name": connection.account_name, "url": connection.webhook_url}))
