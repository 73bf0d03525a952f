"""`manage.py journal SLUG [--run ID] [--json]`: the run journal of a bot's route runs."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.models import Bot
from routes.journal import journal_rows
from routes.models import RouteRun


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Журнал прогонов маршрутов бота: по строке на событие (--json: объект JSON на строку).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--run", type=int, default=None, help=_("только этот прогон"))
        parser.add_argument("--json", action="store_true", help=_("по объекту JSON на строку"))

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(_("Бота с кодом «%(slug)s» нет.") % {"slug": options["slug"]})
        run_id = options["run"]
        if run_id is not None and not RouteRun.objects.filter(pk=run_id, bot=bot).exists():
            raise CommandError(_("У бота «%(slug)s» нет прогона %(run)s.") % {"slug": bot.slug, "run": run_id})
        rows = journal_rows(bot_id=bot.pk, run_id=run_id)
        for row in rows:
            if options["json"]:
                keys = ("run", "step", "kind", "verdict_before", "verdict_after", "reason")
                self.stdout.write(json.dumps({key: row[key] for key in keys}, ensure_ascii=False))
            else:
                self.stdout.write(
                    f"{row['run']:>6}  {row['step']:<10} {row['kind']:<16} "
                    f"{_v(row['verdict_before']):>11} → {_v(row['verdict_after']):<11} {row['reason']}"
                )
        if not rows and not options["json"]:
            self.stdout.write(_("Записей в журнале нет."))


def _v(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)
