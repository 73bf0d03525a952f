"""Operators' working hours: a weekly schedule in the bot's own time zone, holidays, and the few
words that tell a visitor when operators work."""

import datetime as dt
import zoneinfo

import pytest

from behavior.hours import operators_available, schedule_text
from bots.models import Holiday
from bots.services import opening_hours_set

pytestmark = pytest.mark.django_db
MOSCOW = zoneinfo.ZoneInfo("Europe/Moscow")
WEEKDAYS = [(day, dt.time(9), dt.time(18)) for day in range(5)]


def _at(year, month, day, hour, minute=0, zone=MOSCOW):
    return dt.datetime(year, month, day, hour, minute, tzinfo=zone)


def test_a_bot_without_a_schedule_always_has_operators(bot):
    assert operators_available(bot, at=_at(2026, 12, 6, 3))  # a Sunday, 3 a.m.
    assert schedule_text(bot) == ""


def test_the_weekly_schedule_decides(bot):
    opening_hours_set(bot=bot, rows=[*WEEKDAYS, (5, dt.time(10), dt.time(16))])
    assert operators_available(bot, at=_at(2026, 12, 1, 9))  # Tuesday 09:00 sharp
    assert not operators_available(bot, at=_at(2026, 12, 1, 18))  # closes at 18:00
    assert not operators_available(bot, at=_at(2026, 12, 1, 8, 59))
    assert operators_available(bot, at=_at(2026, 12, 5, 12))  # Saturday
    assert not operators_available(bot, at=_at(2026, 12, 6, 12))  # Sunday
    assert schedule_text(bot) == "пн–пт 09:00–18:00, сб 10:00–16:00"
    assert schedule_text(bot, "en") == "Mon–Fri 09:00–18:00, Sat 10:00–16:00"


def test_hours_are_the_bots_own_time_zone(bot):
    bot.timezone = "Asia/Novosibirsk"  # UTC+7, four hours ahead of Moscow
    bot.save(update_fields=["timezone"])
    opening_hours_set(bot=bot, rows=WEEKDAYS)
    assert operators_available(bot, at=_at(2026, 12, 1, 6))  # 10:00 in Novosibirsk
    assert not operators_available(bot, at=_at(2026, 12, 1, 15))  # 19:00 there


def test_a_holiday_closes_the_whole_day(bot):
    opening_hours_set(bot=bot, rows=WEEKDAYS)
    Holiday.objects.create(bot=bot, date=dt.date(2026, 12, 31), name="Канун Нового года")
    assert not operators_available(bot, at=_at(2026, 12, 31, 12))
    assert operators_available(bot, at=_at(2026, 12, 30, 12))


def test_a_split_day_lists_both_intervals(bot):
    opening_hours_set(bot=bot, rows=[(0, dt.time(9), dt.time(13)), (0, dt.time(14), dt.time(18))])
    assert not operators_available(bot, at=_at(2026, 11, 30, 13, 30))  # lunch on Monday
    assert schedule_text(bot) == "пн 09:00–13:00, 14:00–18:00"
