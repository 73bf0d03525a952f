"""`manage.py calibrate`: the bot's match threshold recalibrated on its own questions and the shipped
out-of-scope ones, with what the reply without a model does before and after.

The questions:
- the bot's question sets (the «Проверка» page) that say what a right answer shows (a page, a phrase);
- its owner answers' wordings (corrections, Q/A pairs), asked as written: that answer must come;
- files given to the command, in `manage.py evaluate`'s format (question, expected_url(s), answerable);
- questions no company site answers, shipped with the product (insights/data/out_of_scope.*.txt);
- the answerable ones again with a slip in each of their two longest words (two letters swapped).

Every question goes through the chain itself (`pipeline.answer`, no model: the reply every owner
meets first, and the one the match threshold decides), once per candidate threshold around the
bot's own. The candidate kept has the most right answers less WRONG_COST times the false ones (a
confident wrong reply is the failure the product exists to prevent: it costs more than an honest
no-answer to a question the site answers), then lies nearer the bot's threshold. Nothing is saved
unless asked (`apply_threshold`). Then each check of the reply without a model (the speller, the
scope check: settings.CHAT_SPELLER, CHAT_SCOPE_CHECK) is switched off in turn at the chosen
threshold, so the owner sees what it gives and what it costs on these very questions.

What must stay true: a threshold is never chosen from one side alone (no question with an answer,
or none without, is refused with a message); the bot passed in is never changed in memory or in
the database by a dry run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from django.test.utils import override_settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from answers import pipeline
from bots.models import Bot
from knowledge.evaluation import load_cases, url_path
from knowledge.selectors import answer_wordings
from owner.insights.expectations import phrase_found
from owner.insights.models import SetQuestion

SHIPPED: Final = Path(__file__).resolve().parent / "data"
WORDINGS_MAX: Final = 200  # owner answers' wordings asked (the newest): enough to see a threshold refuse them
STEP: Final = 0.01
SPAN: Final = 0.05  # candidates: the bot's threshold ± SPAN, every STEP
FLOOR, CEILING = 0.3, 0.9  # never proposed outside these
WRONG_COST: Final = 2.0  # a false answer weighs as much as two right ones
CHECKS: Final = (("CHAT_SPELLER", gettext_noop("исправление опечаток")),
                 ("CHAT_SCOPE_CHECK", gettext_noop("проверка темы вопроса")))
SLIP_MIN: Final = 5  # letters a word needs to get a slip


class CalibrationError(Exception):
    """A calibration that cannot be made; `.message` says why, for the owner."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Case:
    question: str
    group: str  # where it comes from, as the table shows it
    answerable: bool
    expected_urls: tuple[str, ...] = ()
    expected_phrase: str = ""
    expected_entry_id: int | None = None


@dataclass(frozen=True)
class Rates:
    """The chain without a model on a group of questions at one threshold."""

    threshold: float
    answerable: int
    unanswerable: int
    right: int  # answerable, answered with what was expected
    refused: int  # unanswerable, given the honest no-answer
    false: int  # answered wrong: an answerable one with something else, an unanswerable one at all

    @property
    def answered_right(self) -> float:
        return self.right / self.answerable if self.answerable else 0.0

    @property
    def refusal(self) -> float:
        return self.refused / self.unanswerable if self.unanswerable else 0.0

    @property
    def false_answers(self) -> float:
        total = self.answerable + self.unanswerable
        return self.false / total if total else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {"threshold": self.threshold, "answerable": self.answerable, "unanswerable": self.unanswerable,
                "answered_right": round(self.answered_right, 4), "refusal": round(self.refusal, 4),
                "false_answers": round(self.false_answers, 4)}


@dataclass
class Calibration:
    before: float
    chosen: float
    sweep: list[Rates]  # every candidate, all questions
    groups: dict[str, tuple[Rates, Rates]] = field(default_factory=dict)  # group: (before, after)
    checks: dict[str, Rates] = field(default_factory=dict)  # check's label: all questions with it off

    @property
    def changed(self) -> bool:
        return self.chosen != self.before


# --- the questions --------------------------------------------------------------------------------------


def shipped_out_of_scope(language: str) -> list[str]:
    path = SHIPPED / f"out_of_scope.{language}.txt"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def bot_cases(bot: Bot) -> list[Case]:
    """The bot's own questions: its sets' questions that expect something, its owner answers' wordings."""
    cases = []
    rows = SetQuestion.objects.filter(question_set__bot=bot).select_related("question_set").order_by("pk")
    for row in rows:
        if row.expected_url or row.expected_phrase:
            urls = (row.expected_url,) if row.expected_url else ()
            cases.append(Case(row.question, _("набор «%(name)s»") % {"name": row.question_set.name}, True,
                              expected_urls=urls, expected_phrase=row.expected_phrase))
    for entry_id, text in answer_wordings(bot=bot, limit=WORDINGS_MAX):
        cases.append(Case(text, _("ответы владельца"), True, expected_entry_id=entry_id))
    return cases


def file_cases(paths: Iterable[Path]) -> list[Case]:
    """Cases from files in `manage.py evaluate`'s format; CalibrationError naming a bad file."""
    cases = []
    for path in paths:
        try:
            loaded = load_cases(path)
        except (OSError, ValueError, KeyError) as exc:
            message = _("Не удалось прочитать %(path)s: %(error)s") % {"path": path, "error": exc}
            raise CalibrationError(message) from exc
        cases += [Case(c.question, path.name, c.answerable, expected_urls=c.expected_urls) for c in loaded]
    return cases


def misspelt(question: str) -> str | None:
    """`question` with one slip in each of its two longest words (the two letters in the middle of
    the word swapped, as fast typing does); None when no word has SLIP_MIN letters."""
    words = question.split()
    longest = sorted((i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= SLIP_MIN),
                     key=lambda i: -len(words[i]))[:2]
    if not longest:
        return None
    for i in longest:
        word, middle = words[i], len(words[i]) // 2
        if word[middle - 1] != word[middle]:
            words[i] = word[:middle - 1] + word[middle] + word[middle - 1] + word[middle + 1:]
    slipped = " ".join(words)
    return slipped if slipped != question else None


def all_cases(bot: Bot, files: Sequence[Path] = ()) -> list[Case]:
    cases = bot_cases(bot) + file_cases(files)
    group = _("с опечатками")
    for case in [c for c in cases if c.answerable]:
        slipped = misspelt(case.question)
        if slipped is not None:
            cases.append(Case(slipped, group, True, case.expected_urls, case.expected_phrase, case.expected_entry_id))
    for language in ("ru", "en"):
        group = _("вне тематики (поставляется), %(language)s") % {"language": language}
        cases += [Case(question, group, False) for question in shipped_out_of_scope(language)]
    return cases


# --- running them ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    case: Case
    answered: bool
    right: bool


def judged(case: Case, reply: pipeline.Reply) -> Outcome:
    answered = not reply.flags.get("unanswered") and bool(reply.source_entry_id or reply.links or reply.cards)
    if not answered or not case.answerable:
        return Outcome(case, answered, False)
    if case.expected_entry_id is not None:
        return Outcome(case, True, reply.source_entry_id == case.expected_entry_id)
    url = reply.links[0]["url"] if reply.links else ""
    url_ok = not case.expected_urls or url_path(url) in {url_path(u) for u in case.expected_urls}
    phrase_ok = not case.expected_phrase or phrase_found(case.expected_phrase, reply.text)
    return Outcome(case, True, url_ok and phrase_ok)


def run(bot: Bot, cases: Sequence[Case], threshold: float, *, off: str = "") -> list[Outcome]:
    """Every case through the chain without a model, as if the bot's match threshold were `threshold`
    (and the check named by `off`, a setting of CHECKS, switched off)."""
    trial = copy.copy(bot)  # the caller's bot stays as it is
    trial.match_threshold = threshold
    with override_settings(LLM_PROVIDER="none", **({off: False} if off else {})):
        return [judged(case, pipeline.answer(bot=trial, text=case.question, history=[])) for case in cases]


def rates(outcomes: Sequence[Outcome], threshold: float) -> Rates:
    good = [o for o in outcomes if o.case.answerable]
    bad = [o for o in outcomes if not o.case.answerable]
    return Rates(
        threshold=threshold, answerable=len(good), unanswerable=len(bad),
        right=sum(o.right for o in good), refused=sum(not o.answered for o in bad),
        false=sum(o.answered and not o.right for o in good) + sum(o.answered for o in bad),
    )


def candidates(current: float, *, span: float = SPAN, step: float = STEP) -> list[float]:
    steps = round(span / step)
    values = {round(min(CEILING, max(FLOOR, current + i * step)), 3) for i in range(-steps, steps + 1)}
    return sorted(values | {round(current, 3)})


def calibrate(bot: Bot, cases: Sequence[Case], *, span: float = SPAN, step: float = STEP) -> Calibration:
    """Try every candidate threshold on every case; CalibrationError when one side has no question."""
    if not any(c.answerable for c in cases):
        raise CalibrationError(_(
            "Нет вопросов с известным ответом: добавьте набор вопросов с ожидаемой страницей на странице "
            "«Проверка», исправьте хотя бы один ответ или передайте файл с вопросами."))
    if all(c.answerable for c in cases):
        raise CalibrationError(_("Нет вопросов без ответа: без них порог нельзя выбрать честно."))
    before = round(bot.match_threshold, 3)
    outcomes = {t: run(bot, cases, t) for t in candidates(before, span=span, step=step)}
    sweep = [rates(found, t) for t, found in outcomes.items()]
    chosen = max(sweep, key=lambda r: (r.right - WRONG_COST * r.false, -abs(r.threshold - before))).threshold
    result = Calibration(before=before, chosen=chosen, sweep=sweep)
    for group in dict.fromkeys(c.group for c in cases):
        def of(found: list[Outcome], t: float, group: str = group) -> Rates:
            return rates([o for o in found if o.case.group == group], t)
        result.groups[group] = (of(outcomes[before], before), of(outcomes[chosen], chosen))
    for setting, label in CHECKS:
        result.checks[_(label)] = rates(run(bot, cases, chosen, off=setting), chosen)
    return result


def apply_threshold(bot: Bot, calibration: Calibration) -> Bot:
    """Saves the chosen threshold (through the bots' own writer)."""
    from bots.services import bot_match_threshold_set

    return bot_match_threshold_set(bot=bot, value=calibration.chosen)
