"""`manage.py senddigest [SLUG]`: send last week's digest now (to every bot's owners, or one bot's)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bots.exceptions import BotNotFound
from bots.models import Bot
from bots.selectors import bot_by_slug
from feedback.digest import digest_send


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Отправить владельцам сводку за прошлую неделю: senddigest [SLUG]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bots = [bot_by_slug(options["slug"])] if options["slug"] else list(Bot.objects.order_by("slug"))
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        for bot in bots:
            try:
                sent = digest_send(bot=bot)
            except OSError as exc:  # the SMTP server refused or is unreachable
                raise CommandError(_("Не удалось отправить сводку «%(name)s»: %(error)s") % {
                    "name": bot.name, "error": exc}) from exc
            self.stdout.write(ngettext("%(slug)s: сводка отправлена %(n)s адресату",
                                       "%(slug)s: сводка отправлена %(n)s адресатам", sent)
                              % {"slug": bot.slug, "n": sent} if sent
                              else _("%(slug)s: у бота нет владельцев с e-mail, сводка не отправлена") % {
                                  "slug": bot.slug})
