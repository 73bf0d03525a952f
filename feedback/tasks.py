"""Celery tasks of the feedback layer: thin, by id, idempotent."""

from __future__ import annotations

from celery import shared_task

from bots.models import Bot


@shared_task
def gaps_refresh_all() -> int:
    """Gaps and the operators' answers proposed as entries, for every bot; then, where a model is
    configured, it confirms or declines the best merge suggestions (feedback/merge_check.py)."""
    from feedback.gaps import gaps_refresh
    from feedback.merge_check import gaps_merge_check
    from feedback.operator_answers import operator_answers_refresh

    total = 0
    for bot in Bot.objects.all():
        total += gaps_refresh(bot=bot) + operator_answers_refresh(bot=bot)
        gaps_merge_check(bot=bot)
    return total


@shared_task
def outcomes_refresh_all() -> int:
    from feedback.outcomes import outcomes_refresh

    return sum(outcomes_refresh(bot=bot) for bot in Bot.objects.all())


@shared_task
def send_digests() -> int:
    """Celery beat, Monday morning: one task per bot, so one failing mailbox does not stop the rest."""
    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    for bot_id in bot_ids:
        send_digest.delay(bot_id)
    return len(bot_ids)


@shared_task
def send_digest(bot_id: int) -> int:
    from feedback.digest import digest_send

    bot = Bot.objects.filter(pk=bot_id).first()
    return digest_send(bot=bot, once=True) if bot is not None else 0
