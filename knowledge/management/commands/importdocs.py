"""`manage.py importdocs SLUG FILE...`: PDF, DOCX, TXT and Markdown files into a bot's knowledge.

Each file is imported on its own: a bad file prints why and the others still go in; the exit
code is non-zero when any file failed. Then the embedding pass runs here, synchronously.
This module also holds the helpers the other import commands share.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from tqdm import tqdm

from bots.exceptions import BotNotFound
from bots.models import Bot
from bots.selectors import bot_by_slug
from knowledge.exceptions import DocumentTooLarge, KnowledgeError
from knowledge.importing import ImportResult, document_import
from knowledge.indexing import embed_pending


def file_read(path: Path, *, limit: int | None = None) -> bytes:
    """Read a file named on the command line, refusing an oversized one before loading it."""
    try:
        size = path.stat().st_size
        if limit is not None and size > limit:
            raise DocumentTooLarge(path.name, size, limit)
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise KnowledgeError(_("Файл «%(path)s» не найден. Проверьте путь.") % {"path": path}) from exc
    except IsADirectoryError as exc:
        raise KnowledgeError(_("«%(path)s» — это папка, а нужен файл.") % {"path": path}) from exc
    except PermissionError as exc:
        raise KnowledgeError(_("Нет прав на чтение файла «%(path)s».") % {"path": path}) from exc
    except (OSError, ValueError) as exc:  # a name with a NUL, too long a name, a broken device
        raise KnowledgeError(_("Не удалось прочитать файл «%(path)s»: %(error)s.") % {
            "path": f"{path!s:.200}", "error": type(exc).__name__}) from exc


def bot_for_command(slug: str) -> Bot:
    try:
        return bot_by_slug(slug)
    except BotNotFound as exc:
        raise CommandError(str(exc)) from exc


def add_embedding_flag(parser: CommandParser) -> None:
    parser.add_argument(
        "--no-embed", action="store_true",
        help=_("не считать векторы сейчас (их посчитает следующий проход векторизации)"),
    )


def embed_now(command: BaseCommand, bot: Bot, *, skip: bool) -> None:
    """The embedding pass for everything the import left without a vector, with a progress bar
    on a terminal and nothing but the final count in logs."""
    if skip:
        command.stdout.write(_("Векторизация пропущена (--no-embed)."))
        return
    bar = tqdm(total=0, desc=_("Векторы"), unit=_("зап"), file=sys.stderr, disable=not command.stdout.isatty(),
               leave=False)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        done = embed_pending(bot_id=bot.pk, batch_size=settings.EMBEDDING_BATCH, progress=progress)
    finally:
        bar.close()
    command.stdout.write(_("Векторизовано записей: %(n)s") % {"n": done})


def result_line(label: str, result: ImportResult) -> str:
    return f"{label}: {result.summary()}"


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Импортировать документы (PDF, DOCX, TXT, Markdown) в знания бота: importdocs SLUG FILE...")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument("--url", default="", help=_("где документ опубликован (только для одного файла)"))
        add_embedding_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        bot = bot_for_command(options["slug"])
        files: list[Path] = options["files"]
        if options["url"] and len(files) > 1:
            raise CommandError(_("--url можно указать только для одного файла."))
        failed = [path for path in files if not self._import(bot, path, options["url"])]
        embed_now(self, bot, skip=options["no_embed"] or len(failed) == len(files))
        if failed:
            raise CommandError(_("Не импортировано файлов: %(failed)s из %(total)s.") % {"failed": len(failed),
                                                                                         "total": len(files)})

    def _import(self, bot: Bot, path: Path, url: str) -> bool:
        try:
            data = file_read(path, limit=settings.UPLOAD_MAX_BYTES)
            result = document_import(bot=bot, filename=path.name, data=data, url=url)
        except KnowledgeError as exc:
            self.stderr.write(f"{path}: {exc.message}")
            return False
        self.stdout.write(result_line(str(path), result))
        return True
