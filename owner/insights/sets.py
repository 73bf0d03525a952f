"""Question sets (Fin's batch tests): up to MAX_QUESTIONS questions, pasted one per line, each
optionally followed by what a right answer shows, after « | »: the page it cites (a URL) and/or a
phrase it contains. Example line: «Сколько стоит доставка? | https://shop.example/delivery | 300 ₽».

What must stay true: a set is saved whole or not at all; a refused paste says which line and why,
and the set saved before stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bots.models import Bot
from core.validators import validate_web_url
from owner.insights.models import QuestionSet, SetQuestion
from owner.insights.testing import InsightsError, question_clean

MAX_QUESTIONS: Final = 50
NAME_MAX: Final = 100
PHRASE_MAX: Final = 300
URL_MAX: Final = 2000
PASTE_MAX: Final = 300_000  # 50 questions of the widget's longest (4000) with their expectations
SEPARATOR: Final = "|"


class SetInvalid(Exception):
    """A set that was not saved: {field: [messages]} for the form ("name", "questions")."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True)
class Draft:
    question: str
    expected_url: str = ""
    expected_phrase: str = ""


def set_text(question_set: QuestionSet) -> str:
    """The set's questions as the owner pasted them (for editing)."""
    lines = []
    for case in question_set.cases.all():
        parts = [case.question, case.expected_url, case.expected_phrase]
        lines.append(f" {SEPARATOR} ".join(part for part in parts if part))
    return "\n".join(lines)


def questions_parse(text: Any) -> list[Draft]:
    """The pasted lines as drafts; SetInvalid naming every bad line (at most ten of them)."""
    if not isinstance(text, str) or not text.strip():
        raise SetInvalid({"questions": [_("Добавьте хотя бы один вопрос: по одному в строке.")]})
    if len(text) > PASTE_MAX:
        raise SetInvalid({"questions": [_("Слишком длинный текст: не больше %(limit)d символов.")
                                        % {"limit": PASTE_MAX}]})
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) > MAX_QUESTIONS:
        message = ngettext("В наборе %(count)d вопрос, а можно не больше %(limit)d. Разделите его на два набора.",
                           "В наборе %(count)d вопросов, а можно не больше %(limit)d. Разделите его на два набора.",
                           len(lines))
        raise SetInvalid({"questions": [message % {"count": len(lines), "limit": MAX_QUESTIONS}]})
    drafts: list[Draft] = []
    problems: list[str] = []
    for number, line in lines:
        try:
            drafts.append(_draft(line))
        except InsightsError as exc:
            problems.append(_("Строка %(line)d: %(problem)s") % {"line": number, "problem": exc.message})
    if problems:
        raise SetInvalid({"questions": problems[:10]})
    return drafts


def _draft(line: str) -> Draft:
    question, *expected = (part.strip() for part in line.split(SEPARATOR))
    question = question_clean(question)
    url = phrase = ""
    for part in expected:
        if not part:
            continue
        if part.lower().startswith(("http://", "https://")):
            if url:
                raise InsightsError(_("два адреса источника; оставьте один."))
            url = _url(part)
        else:
            if phrase:
                raise InsightsError(_("две ожидаемые фразы; оставьте одну."))
            if len(part) > PHRASE_MAX:
                raise InsightsError(_("ожидаемая фраза длиннее %(limit)d символов.") % {"limit": PHRASE_MAX})
            phrase = part
    return Draft(question=question, expected_url=url, expected_phrase=phrase)


def _url(value: str) -> str:
    if len(value) > URL_MAX:
        raise InsightsError(_("адрес источника длиннее %(limit)d символов.") % {"limit": URL_MAX})
    try:
        validate_web_url(value)
    except ValidationError as exc:
        raise InsightsError(" ".join(exc.messages)) from exc
    return value


def _name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SetInvalid({"name": [_("Назовите набор, например «Доставка и оплата».")]})
    if len(name.strip()) > NAME_MAX:
        raise SetInvalid({"name": [_("Название длиннее %(limit)d символов.") % {"limit": NAME_MAX}]})
    return name.strip()


def question_set_save(*, bot: Bot, name: Any, text: Any, question_set: QuestionSet | None = None) -> QuestionSet:
    """Create a set, or replace the name and questions of `question_set` (one of the bot's).
    Runs already made keep their answers: they copied their questions."""
    errors: dict[str, list[str]] = {}
    clean_name, drafts = "", []
    try:
        clean_name = _name(name)
    except SetInvalid as exc:
        errors |= exc.errors
    try:
        drafts = questions_parse(text)
    except SetInvalid as exc:
        errors |= exc.errors
    if errors:
        raise SetInvalid(errors)
    if question_set is not None and question_set.bot_id != bot.pk:
        raise ValueError("the set belongs to another bot")
    with transaction.atomic():
        if question_set is None:
            question_set = QuestionSet.objects.create(bot=bot, name=clean_name)
        else:
            question_set.name = clean_name
            question_set.save(update_fields=["name", "updated_at"])
            question_set.cases.all().delete()
        SetQuestion.objects.bulk_create([
            SetQuestion(question_set=question_set, position=position, question=draft.question,
                        expected_url=draft.expected_url, expected_phrase=draft.expected_phrase)
            for position, draft in enumerate(drafts, start=1)
        ])
    from owner.insights.batch import sets_known

    sets_known(bot_id=bot.pk)
    return question_set


def question_set_delete(*, question_set: QuestionSet) -> None:
    question_set.delete()
