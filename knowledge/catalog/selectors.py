"""Reads of the commerce layer (one query each)."""

from __future__ import annotations

from bots.models import Bot
from knowledge.catalog.models import OrderEndpoint


def order_endpoint_for(bot: Bot) -> OrderEndpoint | None:
    """The bot's order endpoint when it is switched on (an unsaved bot has none)."""
    if bot.pk is None:
        return None
    return OrderEndpoint.objects.filter(bot=bot, enabled=True).first()
