"""Celery tasks of the review layer: thin, idempotent."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from bots.models import Bot

SWEEP_WINDOW = timedelta(days=2)


@shared_task
def review_sweep_all() -> int:
    """Re-record the last two days' flagged answers of every bot (a lost signal costs no item)."""
    from review.services import review_sweep

    since = timezone.now() - SWEEP_WINDOW
    return sum(review_sweep(bot=bot, since=since) for bot in Bot.objects.all())
