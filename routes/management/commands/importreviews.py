"""`manage.py importreviews SLUG FILE.csv`: customer reviews from a CSV file, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.models import Bot
from routes.reviews import COLUMNS, ReviewsRefused, csv_parse, reviews_import

MAX_FILE = 20 * 1024 * 1024


class Command(BaseCommand):
    help = f"Импорт отзывов покупателей из CSV (столбцы: {', '.join(COLUMNS)})."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(f"Бота с кодом «{options['slug']}» нет.")
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"Файла {path} нет.")
        if path.stat().st_size > MAX_FILE:
            raise CommandError(f"Файл {path} больше {MAX_FILE // (1024 * 1024)} МБ.")
        try:
            imported = reviews_import(bot=bot, drafts=csv_parse(path.read_bytes()))
        except ReviewsRefused as exc:
            raise CommandError("Файл не импортирован, ничего не сохранено:\n" + "\n".join(exc.problems)) from exc
        self.stdout.write(f"Импортировано отзывов: {len(imported.created)}; уже были: {imported.skipped}.")
