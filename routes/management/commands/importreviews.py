"""`manage.py importreviews SLUG FILE.csv`: customer reviews from a CSV file, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.models import Bot
from routes.reviews import COLUMNS, ReviewsRefused, csv_parse, reviews_import

MAX_FILE = 20 * 1024 * 1024


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Импорт отзывов покупателей из CSV (столбцы: %(columns)s).") % {"columns": ", ".join(COLUMNS)}

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(_("Бота с кодом «%(slug)s» нет.") % {"slug": options["slug"]})
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(_("Файла %(path)s нет.") % {"path": path})
        if path.stat().st_size > MAX_FILE:
            raise CommandError(_("Файл %(path)s больше %(mb)s МБ.") % {"path": path, "mb": MAX_FILE // (1024 * 1024)})
        try:
            imported = reviews_import(bot=bot, drafts=csv_parse(path.read_bytes()))
        except ReviewsRefused as exc:
            problems = "\n".join(exc.problems)
            raise CommandError(_("Файл не импортирован, ничего не сохранено:") + "\n" + problems) from exc
        self.stdout.write(_("Импортировано отзывов: %(created)s; уже были: %(skipped)s.") % {
            "created": len(imported.created), "skipped": imported.skipped})
