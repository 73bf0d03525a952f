"""Run the intent rules from the shell: one phrase, or a file of phrases through --stdin.

python manage.py classify "Добрый вечер, есть ли доставка?"      -> purchase
python manage.py classify --stdin < phrases.txt                   -> intent<TAB>phrase per line
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from behavior.intents import classify


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Классифицировать реплику правилами (без модели): classify ТЕКСТ или classify --stdin")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", nargs="?", default=None, help=_("реплика посетителя"))
        parser.add_argument("--stdin", action="store_true", help=_("читать по одной реплике в строке из stdin"))

    def handle(self, *args: Any, **options: Any) -> None:
        # From the shell options["stdin"] is True; call_command("classify", stdin=io.StringIO(...))
        # maps its keyword onto this same option, so there it is the stream itself.
        source = options.get("stdin")
        if source:
            self._classify_lines(sys.stdin if source is True else source)
        elif options["text"] is not None:
            self.stdout.write(classify(options["text"]).name)
        else:
            raise CommandError(_("Нужна реплика или --stdin"))

    def _classify_lines(self, stream: TextIO) -> None:
        for line in stream:
            phrase = line.strip()
            if phrase:
                self.stdout.write(f"{classify(phrase).name}\t{phrase}")
