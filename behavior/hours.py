"""Operators' working hours (the Behavior layer, docs/architecture.md): is a person there to take a conversation
now, and how to say when they are.

A bot without any schedule rows has operators at any time; a holiday closes the whole day. All
times are the bot's own (`Bot.timezone`): a shop in Novosibirsk opens at nine there.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from itertools import groupby

from django.utils import timezone

from bots.models import Bot

_SHORT_DAYS = {
    "ru": ["пн", "вт", "ср", "чт", "пт", "сб", "вс"],
    "en": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
}


def local_now(bot: Bot, at: dt.datetime | None = None) -> dt.datetime:
    """`at` (default: now) on the bot's wall clock; a broken time zone name reads as Moscow time."""
    try:
        zone = zoneinfo.ZoneInfo(bot.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = zoneinfo.ZoneInfo("Europe/Moscow")
    return (at or timezone.now()).astimezone(zone)


def operators_available(bot: Bot, *, at: dt.datetime | None = None) -> bool:
    """True when the schedule says operators work at `at` (default: now)."""
    if bot.pk is None:  # a bot that was never saved (a dry run) has no schedule
        return True
    hours = list(bot.opening_hours.all())
    if not hours:
        return True
    local = local_now(bot, at)
    if bot.holidays.filter(date=local.date()).exists():
        return False
    moment = local.time()
    return any(h.weekday == local.weekday() and h.opens <= moment < h.closes for h in hours)


def _day_span(days: list[int], names: list[str]) -> str:
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{names[days[0]]}–{names[days[-1]]}"
    return ", ".join(names[day] for day in days)


def schedule_text(bot: Bot, language: str = "ru") -> str:
    """The weekly schedule in a few words, e.g. «пн–пт 09:00–18:00, сб 10:00–16:00»; "" when the
    bot has no schedule (operators at any time)."""
    if bot.pk is None:
        return ""
    names = _SHORT_DAYS.get(language, _SHORT_DAYS["ru"])
    by_day: dict[int, str] = {}
    for weekday, rows in groupby(bot.opening_hours.order_by("weekday", "opens"), key=lambda h: h.weekday):
        by_day[weekday] = ", ".join(f"{h.opens:%H:%M}–{h.closes:%H:%M}" for h in rows)
    parts: list[str] = []
    for hours, days in groupby(sorted(by_day), key=lambda day: by_day[day]):
        parts.append(f"{_day_span(list(days), names)} {hours}")
    return ", ".join(parts)

