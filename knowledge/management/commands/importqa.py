"""`manage.py importqa SLUG FILE.csv`: question/answer pairs from a CSV into a bot's knowledge.
One bad row and nothing is imported; every bad row is listed with its line number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from knowledge.exceptions import KnowledgeError
from knowledge.importing import qa_import_csv
from knowledge.management.commands.importdocs import (
    add_embedding_flag,
    bot_for_command,
    embed_now,
    file_read,
    result_line,
)


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Импортировать вопросы и ответы из CSV (вопрос;ответ[;вес][;ссылка]): importqa SLUG FILE.csv")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file", type=Path, metavar="FILE.csv")
        add_embedding_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        bot = bot_for_command(options["slug"])
        path: Path = options["file"]
        try:
            result = qa_import_csv(bot=bot, data=file_read(path, limit=settings.UPLOAD_MAX_BYTES), filename=path.name)
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(result_line(str(path), result))
        embed_now(self, bot, skip=options["no_embed"])
