"""The bot's return: after an operator presses «Вернуть боту», the bot answers the visitor's
question nobody answered while they waited (`services.question_answer_returned`). A Celery task,
queued after the release commits: the chain may wait seconds for a model, and the operator's
press must not wait for it. Thin and idempotent: by id, re-read, and a second run finds the answer
(or a newer message) and does nothing."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from chat import services


@shared_task
def answer_returned(message_id: int) -> int:
    """How many messages the bot's answer stored (0: nothing was owed any more)."""
    return len(services.question_answer_returned(message_id=message_id))


def answer_returned_on_commit(message_id: int) -> None:
    transaction.on_commit(lambda: answer_returned.delay(message_id))
