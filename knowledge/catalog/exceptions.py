"""Errors of the commerce layer, worded for a shop owner (they are shown in the admin and by commands)."""

from __future__ import annotations

from core.texts import Text, shown


class SecretsUnreadable(Exception):
    """The stored header token cannot be decrypted: the key changed since it was saved. `text` is a
    stored text (core/texts.py) for the lookup log; `str()` is it in the active language."""

    def __init__(self, text: Text) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return shown(self.text)
