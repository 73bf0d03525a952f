"""Reads of the messengers for the owner's pages: the connections and what came through them."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from bots.models import Bot
from chat import selectors as chat_selectors
from messengers.models import Connection


def connections_of(bot: Bot) -> dict[str, Connection]:
    """The bot's connections by messenger (kind)."""
    return {connection.kind: connection for connection in Connection.objects.filter(bot=bot)}


def conversations_by_channel(bot: Bot, *, days: int = 30) -> dict[str, int]:
    """How many conversations each channel (the widget included) started in the last `days` days."""
    return chat_selectors.conversations_by_channel(bot=bot, since=timezone.now() - timedelta(days=days))


def public_url_reachable(url: str) -> bool:
    """Whether a messenger could post to this address: https and not this machine."""
    host = url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    return url.startswith("https://") and host not in {"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]"}  # noqa: S104
