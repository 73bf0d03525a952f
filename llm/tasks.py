"""Celery tasks of the llm layer: thin, by id (llm/budget.py holds the rules)."""

from __future__ import annotations

from celery import shared_task

from llm.budget import budget_alert_email


@shared_task(autoretry_for=(OSError,), retry_backoff=60, max_retries=5)
def budget_alert_send(bot_id: int, month: str) -> int:
    """The month's budget e-mail to the bot's owners (claimed once per month before it is queued)."""
    return budget_alert_email(bot_id=bot_id, month=month)
