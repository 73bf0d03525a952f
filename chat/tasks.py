"""Celery tasks of the chat: thin, by ID, idempotent (HackSoft's habit, as in knowledge/tasks.py).

- `webhook_deliver` (defined in webhooks.py, next to the attempt it retries; imported here for the worker).
- `offer_leads_to_waiting` (beat): conversations nobody took in time get the contact form.
- `purge_expired` (beat): transcripts and leads past each bot's retention limit.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db.models import DurationField, ExpressionWrapper, F
from django.db.models.functions import Now

from bots.models import Bot
from chat import leads
from chat.models import Conversation
from chat.returns import answer_returned  # noqa: F401  (registered with the worker from here)
from chat.webhooks import webhook_deliver  # noqa: F401  (registered with the worker from here)

logger = logging.getLogger("spravka.chat")


@shared_task
def offer_leads_to_waiting() -> int:
    """Every waiting conversation past its bot's `lead_offer_minutes`, offered the form once."""
    minutes = ExpressionWrapper(F("bot__lead_offer_minutes") * timedelta(minutes=1), output_field=DurationField())
    due = (
        Conversation.objects.filter(state=Conversation.State.WAITING_OPERATOR, lead_offered_at__isnull=True)
        .annotate(limit=minutes)
        .filter(waiting_since__lt=Now() - F("limit"))
        .values_list("pk", flat=True)
    )
    return sum(leads.lead_offer_to_waiting(conversation_id=pk) for pk in list(due))


@shared_task
def purge_expired() -> int:
    removed = 0
    for bot in Bot.objects.only("pk", "retention_days"):
        counts = leads.retention_purge(bot=bot)
        removed += counts["conversations"] + counts["leads"]
    if removed:
        logger.info("retention: removed %s conversations and leads", removed)
    return removed
