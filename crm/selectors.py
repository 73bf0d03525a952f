"""What the owner's CRM page reads: the bot's connection and its recent deliveries."""

from __future__ import annotations

from bots.models import Bot
from crm.models import CrmConnection, CrmDelivery

RECENT = 20


def connection_of(bot: Bot) -> CrmConnection | None:
    return CrmConnection.objects.filter(bot=bot).first()


def recent_deliveries(bot: Bot, limit: int = RECENT) -> list[CrmDelivery]:
    return list(CrmDelivery.objects.filter(bot=bot).select_related("lead").order_by("-created_at", "-id")[:limit])


def delivery_of(bot: Bot, delivery_id: int) -> CrmDelivery | None:
    """The bot's delivery `delivery_id`, or None (another bot's answers as a missing one)."""
    return CrmDelivery.objects.filter(bot=bot, pk=delivery_id).first()
