"""Errors of the review layer. Each carries `.message` (for the owner, in the language active when it
was raised: Russian first, English through gettext) and `.status`, the HTTP status the admin's JSON
endpoints answer with; the management command shows `.message` as is."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import ngettext


class ReviewError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AnswerEmpty(ReviewError):
    code = "empty"

    def __init__(self) -> None:
        super().__init__(_("Ответ пустой. Напишите, как бот должен отвечать, и сохраните ещё раз."))


class AnswerTooLong(ReviewError):
    code = "too_long"

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(ngettext(
            "Ответ слишком длинный: %(length)s знак при пределе %(limit)s. Сократите его или разбейте на "
            "несколько записей в знаниях.",
            "Ответ слишком длинный: %(length)s знаков при пределе %(limit)s. Сократите его или разбейте на "
            "несколько записей в знаниях.", length,
        ) % {"length": length, "limit": limit})


class QuestionInvalid(ReviewError):
    code = "question"


class DecisionUnknown(ReviewError):
    code = "decision"

    def __init__(self, decision: str) -> None:
        super().__init__(_("Неизвестное решение «%(decision)s». Нажмите одну из трёх кнопок.") % {
            "decision": decision[:40]})


class ItemNotFound(ReviewError):
    status = 404
    code = "not_found"

    def __init__(self) -> None:
        super().__init__(_("Такого ответа в очереди нет."))


class AlreadyDecided(ReviewError):
    status = 409
    code = "already_decided"

    def __init__(self, decision_label: str) -> None:
        super().__init__(_(
            "Решение по этому ответу уже сохранено: «%(decision)s». Повторно оно не записано; "
            "чтобы изменить его, нажмите «Отменить»."
        ) % {"decision": decision_label})


class NotDecided(ReviewError):
    status = 409
    code = "not_decided"

    def __init__(self) -> None:
        super().__init__(_("Этот ответ ещё ждёт решения: отменять нечего."))


class WordingTaken(ReviewError):
    status = 409
    code = "wording_taken"

    def __init__(self, wording: str, correction_id: int) -> None:
        super().__init__(_(
            "Формулировка «%(wording)s» уже есть у поправки №%(n)s: один вопрос — одна поправка. "
            "Измените ту поправку или отмените её, а эту формулировку уберите."
        ) % {"wording": wording[:200], "n": correction_id})
