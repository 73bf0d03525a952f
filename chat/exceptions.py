"""Domain errors of the chat. Each carries the `code` of the websocket error frame and a message a
visitor understands, in Russian or English: its text is the replies key "error_<key>" filled with
the error's values (`message_in`); the consumer maps errors to frames in one place
(`ChatConsumer.receive` via frames.error_frame), the `ask` command prints the message. Codes are
part of docs/widget-protocol.md: never rename one."""

from __future__ import annotations

from typing import Any, Final

from django.db import InterfaceError, OperationalError

from answers import replies

# The database is away (restarted, failed over, unreachable): the connection broke or could not be
# made. Nothing of the failed statement was committed; the same write may be tried again.
DATABASE_AWAY: Final = (OperationalError, InterfaceError)


class ChatError(Exception):
    code = "error"
    key = "error"  # the text: replies.TEXTS[language]["error_" + key]

    def __init__(self, message: str | None = None, **values: Any) -> None:
        self.custom = message  # a text made for this case (in the bot's language), shown as is
        self.values = {name: str(value) for name, value in values.items()}
        self.message = message or self.message_in("ru")
        super().__init__(self.message)

    def message_in(self, language: str) -> str:
        if self.custom:
            return self.custom
        texts = replies.TEXTS.get(language, replies.TEXTS["ru"])
        return texts[f"error_{self.key}"].format(**self.values)

    @property
    def default_message(self) -> str:
        return replies.TEXTS["ru"][f"error_{self.key}"]


class BadFrame(ChatError):
    """A frame we cannot read. `key` picks a text of its own for the case (replies "error_<key>",
    in both languages) while the code stays bad_frame."""

    code = key = "bad_frame"

    def __init__(self, message: str | None = None, *, field: str | None = None, key: str | None = None) -> None:
        if field is not None:
            self.key = "bad_field"
            super().__init__(message, field=field)
        else:
            if key is not None:
                self.key = key
            super().__init__(message)


class FrameTooLarge(ChatError):
    code = key = "too_large"


class HelloRequired(ChatError):
    code = key = "hello_required"


class ValidationFailed(ChatError):
    """The text itself is not acceptable; `code` says why (empty or too_long)."""

    code = key = "empty"

    def __init__(self, message: str | None = None, *, code: str = "empty", key: str | None = None,
                 **values: Any) -> None:
        self.code = code
        if key is not None:  # a text of its own for this case (replies "error_<key>")
            self.key = key
        elif f"error_{code}" in replies.TEXTS["ru"]:
            self.key = code
        super().__init__(message, **values)


class ConversationClosed(ChatError):
    code = key = "closed"


class NotFound(ChatError):
    code = key = "not_found"


class HandoffUnavailable(ChatError):
    code = key = "handoff_unavailable"


class ServerError(ChatError):
    """Anything unexpected; the details go to the log, never to the visitor."""

    code = key = "server_error"


class Unavailable(ChatError):
    """The database is away for a moment: this frame stored nothing (or its answer is still owed);
    the widget sends it again after `retry_after` s, the same client_msg_id."""

    code = key = "unavailable"

    def __init__(self, retry_after: int = 3) -> None:
        self.retry_after = retry_after
        super().__init__(seconds=retry_after)


class RateLimited(ChatError):
    code = key = "rate_limited"

    def __init__(self, retry_after: int, *, what: str = "messages") -> None:
        self.retry_after = max(1, int(retry_after))
        self.what = what
        if what != "messages":  # leads, conversations, handoffs, ratings: each says what it counted
            self.key = f"rate_limited_{what}"
        super().__init__(seconds=self.retry_after)


class TooManySockets(ChatError):
    code = key = "too_many_sockets"


class AlreadyTaken(ChatError):
    """Another operator holds the conversation (the operator protocol's `already_taken`)."""

    code = key = "already_taken"

    def __init__(self, holder: str) -> None:
        self.holder = holder
        super().__init__(holder=holder)


class InvalidField(ChatError):
    """A form field (the visitor's contact form) is missing or wrong; `field` names it. The text is
    the caller's `key` (replies "error_<key>", in both languages, filled with `values`), or, without
    one, the general «check the field» text."""

    code = key = "invalid_field"

    def __init__(self, field: str, *, key: str | None = None, **values: Any) -> None:
        self.field = field
        if key is not None:
            self.key = key
        super().__init__(field=field, **values)


class LeadUnavailable(ChatError):
    code = key = "lead_unavailable"


class CsatRefused(ChatError):
    """A conversation's rating (the `csat` frame) is not taken: `key` says why (replies
    "error_csat_*"), `field` names the part of the form at fault when there is one."""

    code = "csat_refused"
    key = "csat_not_found"

    def __init__(self, *, key: str, field: str | None = None, **values: Any) -> None:
        self.key = key
        self.field = field
        super().__init__(**values)


class TransferRefused(ChatError):
    """A conversation cannot be handed over: not held by the one handing it, or the receiver is no
    operator of its bot. Always raised with its own text (marked with gettext_noop), so the
    operator's socket says it in the operator's language."""

    code = "transfer_refused"
