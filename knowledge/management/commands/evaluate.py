"""`manage.py evaluate SLUG CASES.jsonl [--json]`: retrieval quality and latency on a case file.

Prints hit@1, hit@3, MRR (answerable cases), answered-right (answerable, top score >= match and
right within the top 3), refusal (unanswerable and top score < match) and p50/p95 latency of
the whole search call, query embedding included (what a visitor waits for).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from knowledge.evaluation import Report, load_cases, run_cases, summarize
from knowledge.search import SearchResult, search_entries


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Оценить поиск на наборе вопросов: evaluate SLUG CASES.jsonl [--json]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("cases", type=Path, metavar="CASES.jsonl")
        parser.add_argument("-k", type=int, default=5, help=_("сколько результатов запрашивать"))
        parser.add_argument("--threshold", type=float, default=None, help=_("порог совпадения (по умолчанию — бота)"))
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        try:
            cases = load_cases(options["cases"])
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(_("Не удалось прочитать %(path)s: %(error)s") % {
                "path": options["cases"], "error": exc}) from exc
        if not cases:
            raise CommandError(_("В файле нет ни одного вопроса"))
        k = max(options["k"], 3)

        def search(question: str) -> list[SearchResult]:
            return search_entries(bot, question, k=k)

        search(cases[0].question)  # warm-up: loads the embedding model outside the timings
        threshold = bot.match_threshold if options["threshold"] is None else options["threshold"]
        report = summarize(run_cases(cases, search), threshold=threshold)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False))
        else:
            self.stdout.write(render(report))


def render(report: Report) -> str:
    return "\n".join([
        _("вопросов: %(answerable)s с ответом, %(unanswerable)s без ответа; порог %(threshold).3f") % {
            "answerable": report.answerable, "unanswerable": report.unanswerable, "threshold": report.threshold},
        f"hit@1            {report.hit1:.3f}",
        f"hit@3            {report.hit3:.3f}",
        f"MRR              {report.mrr:.3f}",
        f"answered-right   {report.answered_right:.3f}",
        f"refusal          {report.refusal:.3f}",
        f"latency p50/p95  {report.p50_ms:.1f} / {report.p95_ms:.1f} " + _("мс"),
    ])
