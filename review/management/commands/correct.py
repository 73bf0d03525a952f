"""`manage.py correct SLUG --question Q --answer A [--json]`: correction memory from a script.

The same service as «Исправить» in the review queue. Culprits are what the bot would answer Q from
right now: the best entry of a search, if it reaches the match threshold. Before saving it checks
the correction's reach (review/reach.py): the recent visitors' questions it would now answer, and
those whose answer it would change. `--wording` adds another way to ask (repeatable). With `--json`
it prints {"entry_id": N, "culprits": [{"entry_id": N, "url": "…"}], "would_answer": [...],
"changes": [...], "not_taken": [...]} (each answered row {"question", "times", "answer_title",
"answer_url"}; each close question left {"question", "times", "other_words", "cosine"}).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from knowledge.search import search_entries
from knowledge.selectors import entry_cards
from review.exceptions import ReviewError
from review.models import Correction
from review.reach import correction_reach
from review.services import clean_question, correction_apply


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Исправить ответ бота: correct SLUG --question «вопрос» --answer «правильный ответ» [--json]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--question", required=True, help=_("вопрос посетителя"))
        parser.add_argument("--answer", required=True, help=_("правильный ответ"))
        parser.add_argument("--wording", action="append", default=[], help=_("ещё одна формулировка вопроса"))
        parser.add_argument("--json", action="store_true", help=_("результат одной строкой JSON"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        try:
            question = clean_question(options["question"])
            wordings = [clean_question(w) for w in options["wording"]]
            results = search_entries(bot, question, k=1)
            culprits = [r.entry_id for r in results if r.score >= bot.match_threshold]
            reach = correction_reach(bot=bot, question=question, wordings=wordings, answer=options["answer"])
            correction = correction_apply(
                bot=bot, question=question, answer=options["answer"], culprit_ids=culprits,
                origin=Correction.Origin.COMMAND, wordings=wordings,
            )
        except ReviewError as exc:
            raise CommandError(exc.message) from exc
        cards = entry_cards(bot=bot, entry_ids=culprits)
        flagged = [{"entry_id": i, "url": cards[i].url} for i in culprits if i in cards]
        if options["json"]:
            self.stdout.write(json.dumps({"entry_id": correction.entry_id, "culprits": flagged, **reach.as_dict()},
                                         ensure_ascii=False))
            return
        self.stdout.write(_("Поправка сохранена: запись №%(id)s, действует со следующего сообщения.") % {
            "id": correction.entry_id})
        for culprit in flagged:
            self.stdout.write("  " + _("на проверку: запись №%(id)s %(url)s") % {
                "id": culprit["entry_id"], "url": culprit["url"]})
        for row in reach.would_answer:
            self.stdout.write("  " + _("теперь отвечает на: «%(question)s» (было: %(before)s)") % {
                "question": row.question, "before": row.answer_title or _("нет ответа")})
        for close in reach.not_taken:
            self.stdout.write("  " + _("не отвечает на похожий: «%(question)s» (%(why)s)") % {
                "question": close.question,
                "why": ", ".join(close.other_words) or _("по смыслу дальше, чем перефразировка")})
