"""Errors of the Voice layer, each with messages a person understands."""

from __future__ import annotations


class VoiceError(Exception):
    pass


class VoiceInvalid(VoiceError):
    """What the owner entered cannot be saved; `errors` maps a field ("sliders.formality",
    "conditions", "preferred", "forbidden", "replies.ru.greeting") to its messages. Nothing was saved."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(m for messages in errors.values() for m in messages))
        self.errors = errors


class VoiceConflict(VoiceError):
    """Someone saved the voice since this form was opened: the form's edits were not saved over theirs."""
