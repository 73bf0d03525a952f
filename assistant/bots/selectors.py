"""Which bots a person may see. Every view, admin page and consumer goes through these."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from assistant.bots.models import Bot


def bots_for_user(user: Any) -> QuerySet[Bot]:
    if not user.is_authenticated:
        return Bot.objects.none()
    if getattr(user, "is_superuser", False):
        return Bot.objects.all()
    return Bot.objects.filter(memberships__user_id=user.pk).distinct()


def bot_by_slug(slug: str) -> Bot:
    """The bot for a command-line slug, with a message a person understands when it is missing."""
    from assistant.bots.exceptions import BotNotFound

    try:
        return Bot.objects.get(slug=slug)
    except Bot.DoesNotExist as exc:
        raise BotNotFound(slug) from exc
