"""Domain errors of the chat. Each carries the `code` of the websocket error frame and a message a
visitor understands; the consumer maps them to frames in one place (`ChatConsumer._error`), the
`ask` command prints the message. Codes are part of docs/widget-protocol.md: never rename one."""

from __future__ import annotations


class ChatError(Exception):
    code = "error"
    default_message = "Что-то пошло не так. Попробуйте ещё раз."

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class BadFrame(ChatError):
    code = "bad_frame"
    default_message = "Не удалось разобрать сообщение. Обновите страницу и попробуйте ещё раз."


class FrameTooLarge(ChatError):
    code = "too_large"
    default_message = "Сообщение слишком большое."


class HelloRequired(ChatError):
    code = "hello_required"
    default_message = "Чат ещё не готов: сначала нужно представиться (hello)."


class ValidationFailed(ChatError):
    """The text itself is not acceptable; `code` says why (empty or too_long)."""

    code = "empty"
    default_message = "Напишите, пожалуйста, вопрос."

    def __init__(self, message: str | None = None, *, code: str = "empty") -> None:
        super().__init__(message)
        self.code = code


class ConversationClosed(ChatError):
    code = "closed"
    default_message = "Этот разговор завершён. Начните новый, чтобы задать вопрос."


class NotFound(ChatError):
    code = "not_found"
    default_message = "Сообщение не найдено."


class HandoffUnavailable(ChatError):
    code = "handoff_unavailable"
    default_message = "Передать разговор оператору сейчас нельзя. Свяжитесь с нами через контакты на сайте."


class ServerError(ChatError):
    """Anything unexpected; the details go to the log, never to the visitor."""

    code = "server_error"
    default_message = "Что-то пошло не так на нашей стороне. Попробуйте ещё раз через минуту."


class RateLimited(ChatError):
    code = "rate_limited"

    _WHAT = {"messages": "сообщений", "leads": "заявок"}

    def __init__(self, retry_after: int, *, what: str = "messages") -> None:
        self.retry_after = max(1, int(retry_after))
        super().__init__(
            f"Слишком много {self._WHAT.get(what, 'сообщений')} подряд. "
            f"Подождите {self.retry_after} с и попробуйте снова."
        )


class AlreadyTaken(ChatError):
    """Another operator holds the conversation (the operator protocol's `already_taken`)."""

    code = "already_taken"

    def __init__(self, holder: str) -> None:
        self.holder = holder
        super().__init__(f"Разговор уже ведёт {holder}.")


class InvalidField(ChatError):
    """A form field (the visitor's contact form) is missing or wrong; `field` names it."""

    code = "invalid_field"

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class LeadUnavailable(ChatError):
    code = "lead_unavailable"
    default_message = "Оставить контакт здесь сейчас нельзя. Свяжитесь с нами через контакты на сайте."
