"""What can go wrong between Spravka and a messenger, in words the owner and the logs understand."""

from __future__ import annotations


class MessengerError(Exception):
    pass


class BadUpdate(MessengerError):
    """The body is not an update of this messenger (answered 400, nothing stored)."""


class BadToken(MessengerError):
    """The messenger does not know this token."""


class Blocked(MessengerError):
    """The user blocked the bot (403): nothing more is sent until they write again."""


class SendFailed(MessengerError):
    """A call that did not go through; `retryable` when a later attempt may succeed."""

    def __init__(self, message: str, *, status: int | None, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after


class NotConnected(MessengerError):
    """The bot has no working connection to this messenger."""
