"""The review layer listens to the chat (chat.signals): a flagged answer becomes a queue item."""

from __future__ import annotations

from typing import Any

from chat.signals import message_flagged


def on_message_flagged(sender: Any, *, message_id: int, **kwargs: Any) -> None:
    from review.services import review_item_record

    review_item_record(message_id=message_id)


def connect() -> None:
    message_flagged.connect(on_message_flagged, dispatch_uid="review.on_message_flagged")
