"""`manage.py loadpassages SLUG FILE.jsonl`: passages `{"id", "title", "text", "url"}`, one per line,
as chunks of a source named after the file. Built for large files (100k lines): bulk writes.
A bad line and nothing is loaded; re-running updates by id and never duplicates."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from knowledge.exceptions import KnowledgeError
from knowledge.importing import passages_load
from knowledge.management.commands.importdocs import (
    add_embedding_flag,
    bot_for_command,
    embed_now,
    file_read,
    result_line,
)


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Загрузить фрагменты из JSON Lines ({id, title, text, url} в строке): loadpassages SLUG FILE.jsonl")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file", type=Path, metavar="FILE.jsonl")
        add_embedding_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        bot = bot_for_command(options["slug"])
        path: Path = options["file"]
        started = time.monotonic()
        try:
            # No upload limit: this is the operator's bulk tool, files of 100k passages are expected.
            result = passages_load(bot=bot, filename=path.name, data=file_read(path))
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        seconds = _("%(seconds).1f с") % {"seconds": time.monotonic() - started}
        self.stdout.write(f"{result_line(str(path), result)} ({seconds})")
        embed_now(self, bot, skip=options["no_embed"])
