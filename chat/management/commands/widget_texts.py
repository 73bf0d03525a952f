"""`manage.py widget_texts [--check] [--path FILE]`: write the widget's labels, as the catalogs
translate them, into static/assistant/widget.js (the region between its two marker lines); with
--check, change nothing and fail naming every language and key the script has differently.

Needs the compiled catalogs (`make messages`) and the settings, never the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from chat import widget_texts


class Command(BaseCommand):
    help = _("Записать подписи виджета из каталогов переводов в static/assistant/widget.js (--check: только сверить)")
    requires_system_checks: list[str] = []  # no database, no checks
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true",
                            help=_("ничего не менять; ошибка, если скрипт расходится с каталогами"))
        parser.add_argument("--path", type=Path, default=widget_texts.WIDGET_JS,
                            help=_("файл скрипта (по умолчанию static/assistant/widget.js)"))

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            source = path.read_text(encoding="utf-8")
            if options["check"]:
                problems = widget_texts.drift(source)
                if problems:
                    raise CommandError(
                        _("%(path)s расходится с каталогами (запустите manage.py widget_texts):\n%(problems)s")
                        % {"path": path, "problems": "\n".join(f"  {p}" for p in problems)}
                    )
                self.stdout.write(_("%(path)s: подписи совпадают с каталогами.") % {"path": path})
                return
            updated = widget_texts.rewritten(source)
        except OSError as exc:
            raise CommandError(_("Не удалось прочитать %(path)s: %(error)s") % {"path": path, "error": exc}) from exc
        except widget_texts.WidgetTextsError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        if updated == source:
            self.stdout.write(_("%(path)s: подписи совпадают с каталогами.") % {"path": path})
            return
        path.write_text(updated, encoding="utf-8")
        self.stdout.write(_("%(path)s: подписи записаны из каталогов.") % {"path": path})
