"""`manage.py calibrate SLUG [CASES.jsonl …] [--apply] [--json]`: the bot's match threshold
recalibrated on its own questions and the shipped out-of-scope ones (owner/insights/calibration.py).

Prints, for every group of questions, answered-right, refusal and false answers with the bot's
threshold (before) and the chosen one (after), every candidate tried, and what each check of the
reply without a model (the speller, the scope check) changes at the chosen threshold. `--apply` saves the
chosen threshold; without it nothing changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from owner.insights.calibration import (
    SPAN,
    STEP,
    Calibration,
    CalibrationError,
    Rates,
    all_cases,
    apply_threshold,
    calibrate,
)


class Command(BaseCommand):
    help = _("Подобрать порог совпадения на вопросах бота: calibrate SLUG [CASES.jsonl …] [--apply] [--json]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("cases", type=Path, nargs="*", metavar="CASES.jsonl",
                            help=_("ещё вопросы в формате evaluate (question, expected_url, answerable)"))
        parser.add_argument("--span", type=float, default=SPAN, help=_("насколько отходить от порога бота"))
        parser.add_argument("--step", type=float, default=STEP, help=_("шаг перебора порога"))
        parser.add_argument("--apply", action="store_true", help=_("сохранить выбранный порог"))
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        if not (0 < options["step"] <= 0.1 and 0 <= options["span"] <= 0.3):
            raise CommandError(_("Шаг — от 0 до 0,1, размах — от 0 до 0,3."))
        try:
            cases = all_cases(bot, options["cases"])
            result = calibrate(bot, cases, span=options["span"], step=options["step"])
        except CalibrationError as exc:
            raise CommandError(exc.message) from exc
        if options["apply"] and result.changed:
            apply_threshold(bot, result)
        if options["json"]:
            self.stdout.write(json.dumps(as_json(result, applied=options["apply"]), ensure_ascii=False))
        else:
            self.stdout.write(render(result, applied=options["apply"]))


def as_json(result: Calibration, *, applied: bool) -> dict[str, Any]:
    return {
        "before": result.before, "chosen": result.chosen, "applied": applied and result.changed,
        "groups": {name: {"before": b.as_dict(), "after": a.as_dict()} for name, (b, a) in result.groups.items()},
        "sweep": [r.as_dict() for r in result.sweep],
        "checks_off": {label: rates.as_dict() for label, rates in result.checks.items()},
    }


def _row(name: str, rates: Rates) -> str:
    return (f"{name[:60]:<60} {rates.threshold:>6.3f} {rates.answerable + rates.unanswerable:>7} "
            f"{_share(rates.answered_right, rates.answerable):>10} {_share(rates.refusal, rates.unanswerable):>8} "
            f"{rates.false_answers:>8.3f}")


def _share(value: float, count: int) -> str:
    return f"{value:.3f}" if count else "—"


def render(result: Calibration, *, applied: bool) -> str:
    # The column names outside the f-string, where makemessages finds them.
    names = (_("вопросы"), _("порог"), _("всего"), _("верно"), _("отказ"), _("ложные"))
    head = f"{names[0]:<60} {names[1]:>6} {names[2]:>7} {names[3]:>10} {names[4]:>8} {names[5]:>8}"
    lines = [_("Порог совпадения: был %(before).3f, выбран %(chosen).3f") % {
        "before": result.before, "chosen": result.chosen}, "", head]
    for name, (before, after) in result.groups.items():
        lines += [_row(name + " · " + _("сейчас"), before), _row(name + " · " + _("с новым порогом"), after)]
    lines += ["", _("Все пороги (все вопросы):"), head]
    lines += [_row(("→ " if r.threshold == result.chosen else "  ") + _("все"), r) for r in result.sweep]
    on = next(r for r in result.sweep if r.threshold == result.chosen)
    lines += ["", _("Проверки ответа без модели при пороге %(chosen).3f (все вопросы):") % {"chosen": result.chosen},
              head, _row(_("все проверки включены"), on)]
    lines += [_row(_("без: %(check)s") % {"check": label}, rates) for label, rates in result.checks.items()]
    lines.append("")
    if not result.changed:
        lines.append(_("Порог бота уже лучший из проверенных: ничего не меняем."))
    elif applied:
        lines.append(_("Новый порог сохранён."))
    else:
        lines.append(_("Чтобы сохранить новый порог, запустите команду ещё раз с --apply."))
    return "\n".join(lines)
