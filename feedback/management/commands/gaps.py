"""`manage.py gaps SLUG [--json]`: the bot's Gaps, biggest first. With `--json`, one object per line
per topic: {"id", "title", "count", "questions": [...], "last_seen"}."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from feedback.gaps import gap_list, gaps_refresh, trend_word
from feedback.models import Gap, GapQuestion


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Пробелы в знаниях бота: gaps SLUG [--json] [--status open|answered|hidden]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help=_("JSON: одна строка на тему"))
        parser.add_argument("--status", default=Gap.Status.OPEN, choices=Gap.Status.values)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        gaps_refresh(bot=bot)
        rows = gap_list(bot_ids=[bot.pk], status=options["status"], limit=1000)
        for row in rows:
            gap = row["gap"]
            if options["json"]:
                texts = GapQuestion.objects.filter(gap=gap).order_by("asked_at").values_list("text", flat=True)
                questions = list(texts)
                self.stdout.write(json.dumps({
                    "id": gap.pk, "title": gap.title, "count": gap.count, "questions": questions,
                    "last_seen": gap.last_seen.isoformat(),
                }, ensure_ascii=False))
            else:
                seen = date_format(localtime(gap.last_seen), "SHORT_DATE_FORMAT")
                last = _("последний раз %(date)s") % {"date": seen}
                self.stdout.write(f"{gap.count:>4}  {trend_word(row['trend'])}  {gap.title}  ({last})")
        if not rows and not options["json"]:
            self.stdout.write(_("Пробелов нет: на все вопросы бот ответил уверенно."))
