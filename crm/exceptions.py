"""What can go wrong talking to a CRM, with a reason the owner reads (a stored text, core/texts.py)."""

from __future__ import annotations

from core.texts import Stored, russian


class CrmError(Exception):
    """A call that did not work. `retryable`: a later attempt may succeed (a 5xx, 429, a timeout,
    no connection); `refused`: the CRM does not accept the key (401/403): nothing is retried, the
    owner reconnects."""

    def __init__(self, text: Stored, *, status: int | None = None, retryable: bool = False,
                 refused: bool = False) -> None:
        super().__init__(russian(text))
        self.text, self.status, self.retryable, self.refused = text, status, retryable, refused


class BadInput(Exception):
    """What the owner typed cannot be a CRM's address or key; `text` says what to fix."""

    def __init__(self, text: Stored, *, field: str) -> None:
        super().__init__(russian(text))
        self.text, self.field = text, field
