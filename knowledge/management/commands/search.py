"""`manage.py search SLUG "вопрос" [-k 5] [--json]`, or `--stdin` for one question per line.

The JSON form is a contract that benchmarks and checks parse: one object per question,
{"question", "answerable", "results": [{"entry_id", "url", "title", "score", "kind", "review_needed",
"components"}]},
where "answerable" means the top score reaches the bot's match threshold.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.models import Bot
from bots.selectors import bot_by_slug
from knowledge.search import SearchResult, answer_dict, is_match, search_entries


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _('Найти в знаниях бота: search SLUG "вопрос" [-k 5] [--json] [--stdin]')

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("question", nargs="?", default=None)
        parser.add_argument("-k", type=int, default=5, help=_("сколько результатов показать"))
        parser.add_argument("--json", action="store_true", help=_("JSON: одна строка на вопрос"))
        parser.add_argument("--stdin", action="store_true", help=_("вопросы со стандартного ввода, по одному в строке"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        if options["k"] < 1:
            raise CommandError(_("-k должно быть не меньше 1"))
        questions = self._questions(options)
        for question in questions:
            results = search_entries(bot, question, k=options["k"])
            if options["json"]:
                self.stdout.write(json.dumps(answer_dict(bot, question, results), ensure_ascii=False))
            else:
                self._print(bot, question, results)

    def _questions(self, options: dict[str, Any]) -> list[str]:
        if options["stdin"]:
            return [line.strip() for line in sys.stdin if line.strip()]
        if not options["question"] or not options["question"].strip():
            raise CommandError(_("Укажите вопрос или --stdin"))
        return [options["question"].strip()]

    def _print(self, bot: Bot, question: str, results: list[SearchResult]) -> None:
        verdict = _("есть ответ") if is_match(bot, results) else _("нет подходящего ответа")
        self.stdout.write(_("%(question)s — %(verdict)s (порог %(threshold).2f)") % {
            "question": question, "verdict": verdict, "threshold": bot.match_threshold})
        for position, result in enumerate(results, start=1):
            parts = " ".join(f"{name}={value:g}" for name, value in result.components.items())
            self.stdout.write(f"{position}. {result.score:.3f} [{result.kind}] {result.title} {result.url}")
            self.stdout.write(f"   {parts}")
