"""How owners and operators read who a visitor is (core/labels.py): the name they left, else when
they started writing and from which messenger, in the reader's language; never the machine id."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone, translation

from core.labels import visitor_label

MOSCOW = ZoneInfo("Europe/Moscow")


def this_year(month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(timezone.localtime().year, month, day, hour, minute, tzinfo=MOSCOW)


@pytest.mark.parametrize(("lang", "widget", "telegram"), [
    ("ru", "Посетитель, 2 декабря, 12:04", "Посетитель из Telegram, 2 декабря, 12:04"),
    ("en", "Visitor, Dec 2, 12:04 PM", "Visitor from Telegram, Dec 2, 12:04 PM"),
])
def test_a_visitor_without_a_name_is_named_by_when_they_started(lang, widget, telegram):
    started = this_year(12, 2, 12, 4)
    with translation.override(lang):
        assert visitor_label(started=started) == widget
        assert visitor_label(channel_name="Telegram", started=started) == telegram


def test_the_name_they_left_wins_and_is_tidied():
    assert visitor_label(name="  Анна \n Петрова ", channel_name="Telegram", started=this_year(1, 5, 9, 0)) == (
        "Анна Петрова")


def test_an_earlier_year_is_written_and_the_time_is_the_servers():
    started = datetime(2020, 3, 1, 6, 30, tzinfo=ZoneInfo("UTC"))  # 09:30 in Moscow
    with translation.override("ru"):
        assert visitor_label(started=started) == "Посетитель, 1 марта 2020, 09:30"
    with translation.override("en"):
        assert visitor_label(started=started) == "Visitor, Mar 1, 2020, 09:30 AM"


def test_without_a_time_it_is_still_words():
    with translation.override("ru"):
        assert visitor_label() == "Посетитель"
        assert visitor_label(channel_name="ВКонтакте") == "Посетитель из ВКонтакте"
