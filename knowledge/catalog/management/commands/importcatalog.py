from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.models import Bot
from knowledge.catalog import catalog, feeds
from knowledge.catalog.models import CatalogImport


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Загрузить каталог товаров: importcatalog SLUG FILE_OR_URL (YML Яндекс Маркета или CSV со столбцами)")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("feed", help=_("путь к файлу .xml/.yml/.csv или адрес http(s)://"))
        parser.add_argument("--every-hours", type=int, default=None,
                            help=_("обновлять фид по этому адресу каждые N часов (1–8760); 0 — только вручную"))

    def handle(self, *args: Any, **options: Any) -> None:
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(_("Бот «%(slug)s» не найден.") % {"slug": options["slug"]})
        feed = str(options["feed"])
        try:
            if feed.startswith(("http://", "https://")):
                imported = catalog.catalog_import_url(bot=bot, url=feed)
            else:
                path = Path(feed)
                if not path.is_file():
                    raise CommandError(_("Файл «%(path)s» не найден.") % {"path": feed[:200]})
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
            if every:
                self.stdout.write(_("Обновление по расписанию: каждые %(hours)s ч.") % {"hours": every})
            else:
                self.stdout.write(_("Обновление по расписанию: выключено."))
        if run.status == CatalogImport.Status.FAILED:
            raise CommandError(_("Каталог не загружен: %(reason)s. Загруженные раньше товары не изменились.") % {
                "reason": run.message_shown})
        self.stdout.write(self.style.SUCCESS(
            _("Каталог загружен за %(seconds).1f с: добавлено %(added)s, изменено %(changed)s, "
              "удалено %(removed)s, пропущено %(skipped)s (%(message)s).") % {
                "seconds": run.duration_ms / 1000, "added": run.added, "changed": run.changed,
                "removed": run.removed, "skipped": run.skipped, "message": run.message_shown}
        ))
        for problem in run.problems_shown:
            self.stdout.write("  " + _("пропущен %(problem)s") % {"problem": problem})
