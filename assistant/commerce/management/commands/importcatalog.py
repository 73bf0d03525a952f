from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.models import Bot
from assistant.commerce import catalog, feeds
from assistant.commerce.models import CatalogImport


class Command(BaseCommand):
    help = "Загрузить каталог товаров: importcatalog SLUG FILE_OR_URL (YML Яндекс Маркета или CSV со столбцами)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("feed", help="путь к файлу .xml/.yml/.csv или адрес http(s)://")
        parser.add_argument("--every-hours", type=int, default=None,
                            help="обновлять фид по этому адресу каждые N часов (1–8760); 0 — только вручную")

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(f"Бот «{options['slug']}» не найден.")
        feed = str(options["feed"])
        try:
            if feed.startswith(("http://", "https://")):
                imported = catalog.catalog_import_url(bot=bot, url=feed)
            else:
                path = Path(feed)
                if not path.is_file():
                    raise CommandError(f"Файл «{feed[:200]}» не найден.")
                imported = catalog.catalog_import_file(bot=bot, path=path)
        except (feeds.FeedError, OSError, ValueError) as exc:
            raise CommandError(str(exc) or type(exc).__name__) from exc
        run = imported.run
        if options["every_hours"] is not None:
            every = options["every_hours"] or None
            try:
                catalog.catalog_schedule(source=imported.source, every_hours=every)
            except feeds.FeedError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"Обновление по расписанию: {f'каждые {every} ч' if every else 'выключено'}.")
        if run.status == CatalogImport.Status.FAILED:
            raise CommandError(f"Каталог не загружен: {run.message}. Загруженные раньше товары не изменились.")
        self.stdout.write(self.style.SUCCESS(
            f"Каталог загружен за {run.duration_ms / 1000:.1f} с: добавлено {run.added}, изменено {run.changed}, "
            f"удалено {run.removed}, пропущено {run.skipped} ({run.message})."
        ))
        for problem in run.problems:
            self.stdout.write(f"  пропущен {problem}")
