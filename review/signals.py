"""What the review layer tells the apps beside it (feedback listens): sent after commit, ids only.

`decision_saved(sender=ReviewItem, bot_id, question_id, entry_id)`: an owner's decision stored an
answer (a correction or a Q/A entry) for the visitor's question `question_id` (a chat Message id).
`decision_undone(sender=ReviewItem, bot_id, entry_ids)`: a decision was taken back and the answers it
stored are off again.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger("spravka.review")

decision_saved = Signal()
decision_undone = Signal()


def send_on_commit(signal: Signal, sender: Any, **ids: Any) -> None:
    """Send after the caller's commit; a failing receiver is logged and never undoes the decision."""

    def send() -> None:
        for receiver, result in signal.send_robust(sender=sender, **ids):
            if isinstance(result, Exception):
                logger.error("review signal receiver %r failed", receiver, exc_info=result)

    transaction.on_commit(send)
