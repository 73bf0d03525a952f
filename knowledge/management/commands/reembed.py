"""`manage.py reembed SLUG [--model KEY] [--all]`: vectors for a bot's entries after a model change.

Entries embedded by another model (or not at all) are re-embedded; `--all` also redoes those
already embedded by this model (e.g. after a package upgrade changed its weights). Until an entry
is re-embedded, search still finds it through full text and trigrams, just not by meaning.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from knowledge.embeddings import DIMENSIONS
from knowledge.indexing import embed_pending
from knowledge.services import embeddings_reset


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Пересчитать векторы записей бота: reembed SLUG [--model KEY] [--all]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--model", choices=sorted(DIMENSIONS), default=None,
                            help=_("модель (по умолчанию из настроек: %(model)s)") % {
                                "model": settings.EMBEDDING_MODEL})
        parser.add_argument("--all", action="store_true", help=_("пересчитать и уже посчитанные этой моделью"))
        parser.add_argument("--batch", type=int, default=None, help=_("размер пачки"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        model = options["model"] or settings.EMBEDDING_MODEL
        if options["all"]:
            embeddings_reset(bot_id=bot.pk)
        started = time.monotonic()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] > 2 or done == total:
                last[0] = time.monotonic()
                self.stdout.write(f"  {done}/{total}")

        done = embed_pending(bot_id=bot.pk, model_key=model, batch_size=options["batch"], progress=progress)
        elapsed = time.monotonic() - started
        values = {"done": done, "model": model, "seconds": elapsed, "rate": done / elapsed if elapsed > 0 else 0.0}
        if done and elapsed > 0:
            line = _("Готово: %(done)s записей, модель %(model)s, %(seconds).1f с, %(rate).1f в секунду") % values
        else:
            line = _("Готово: %(done)s записей, модель %(model)s, %(seconds).1f с") % values
        self.stdout.write(self.style.SUCCESS(line))
