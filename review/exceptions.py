"""Errors of the review layer. Each carries `.message` (Russian, for the owner) and `.status`, the HTTP
status the admin's JSON endpoints answer with; the management command shows `.message` as is."""

from __future__ import annotations


class ReviewError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AnswerEmpty(ReviewError):
    code = "empty"

    def __init__(self) -> None:
        super().__init__("Ответ пустой. Напишите, как бот должен отвечать, и сохраните ещё раз.")


class AnswerTooLong(ReviewError):
    code = "too_long"

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(
            f"Ответ слишком длинный: {length} знаков при пределе {limit}. Сократите его или разбейте на "
            "несколько записей в знаниях."
        )


class QuestionInvalid(ReviewError):
    code = "question"


class DecisionUnknown(ReviewError):
    code = "decision"

    def __init__(self, decision: str) -> None:
        super().__init__(f"Неизвестное решение «{decision[:40]}». Нажмите одну из трёх кнопок.")


class ItemNotFound(ReviewError):
    status = 404
    code = "not_found"

    def __init__(self) -> None:
        super().__init__("Такого ответа в очереди нет.")


class AlreadyDecided(ReviewError):
    status = 409
    code = "already_decided"

    def __init__(self, decision_label: str) -> None:
        super().__init__(
            f"Решение по этому ответу уже сохранено: «{decision_label}». Повторно оно не записано; "
            "чтобы изменить его, нажмите «Отменить»."
        )


class NotDecided(ReviewError):
    status = 409
    code = "not_decided"

    def __init__(self) -> None:
        super().__init__("Этот ответ ещё ждёт решения: отменять нечего.")
