"""The overview's numbers per operator: the visitors' stars (average, count, per week for the
chart), first reply and resolution times, the promised first-reply time, and nothing of another
bot."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import Conversation, ConversationRating, Message
from tests.owner.dashboard.test_overview import chart_data

pytestmark = pytest.mark.django_db


def _user(django_user_model, email, first_name):
    return django_user_model.objects.create_user(username=email, email=email, password="pw-op-12345",
                                                 first_name=first_name)


def closed_by(bot, operator, *, visitor, asked_ago, reply_after, close_after, stars=None, name=None, comment=""):
    """A conversation where the visitor asked for a person `asked_ago` ago, `operator` wrote
    `reply_after` later and closed it `close_after` after the request; rated with `stars`."""
    asked = timezone.now() - asked_ago
    conversation = Conversation.objects.create(bot=bot, visitor_id=visitor, state="closed")
    note = Message.objects.create(conversation=conversation, bot=bot, role="system", text="Зовём оператора",
                                  llm_meta={"handoff_reason": "button"})
    reply = Message.objects.create(conversation=conversation, bot=bot, role="operator", text="Здравствуйте",
                                   author=operator)
    Message.objects.filter(pk=note.pk).update(created_at=asked)
    Message.objects.filter(pk=reply.pk).update(created_at=asked + reply_after)
    Conversation.objects.filter(pk=conversation.pk).update(closed_at=asked + close_after, closed_by=operator,
                                                           assigned_to=operator)
    if stars is not None:
        rating = ConversationRating.objects.create(bot=bot, conversation=conversation, operator=operator,
                                                   operator_name=name or operator.first_name, stars=stars,
                                                   comment=comment)
        ConversationRating.objects.filter(pk=rating.pk).update(created_at=asked + close_after)
    return conversation


def row_of(html, name):
    found = re.search(rf'<tr data-operator="{name}">(.*?)</tr>', html, re.S)
    assert found, f"no row for {name}"
    cells = dict(re.findall(r'data-csat="(\w+)">(.*?)<', found.group(1)))
    return cells, found.group(1)


def test_each_operator_has_their_stars_and_times(owner_client, bot, other_bot, django_user_model):
    anna = _user(django_user_model, "anna@shop.example", "Анна")
    boris = _user(django_user_model, "boris@shop.example", "Борис")
    minute = timedelta(minutes=1)
    closed_by(bot, anna, visitor="v1", asked_ago=timedelta(hours=5), reply_after=2 * minute, close_after=12 * minute,
              stars=4, comment="<b>Спасибо</b>, всё ясно")
    closed_by(bot, anna, visitor="v2", asked_ago=timedelta(hours=4), reply_after=4 * minute, close_after=20 * minute,
              stars=5)
    closed_by(bot, anna, visitor="v3", asked_ago=timedelta(hours=3), reply_after=9 * minute, close_after=30 * minute)
    closed_by(bot, boris, visitor="v4", asked_ago=timedelta(hours=2), reply_after=timedelta(seconds=30),
              close_after=90 * minute, stars=2)
    # Another tenant's operator and rating never show here.
    olga = _user(django_user_model, "olga@other.example", "Ольга")
    closed_by(other_bot, olga, visitor="v5", asked_ago=timedelta(hours=1), reply_after=minute, close_after=minute,
              stars=1)

    html = owner_client.get("/b/demo/?days=7").content.decode()
    anna_cells, anna_row = row_of(html, "Анна")
    assert anna_cells == {"average": "4,5", "count": "2 оценки", "first_reply": "4 мин", "resolution": "20 мин"}
    assert "3 разговора завершено" in anna_row and "1 ответ позже срока" in anna_row  # 9 min > 5 min promised
    boris_cells, _row = row_of(html, "Борис")
    assert boris_cells == {"average": "2,0", "count": "1 оценка", "first_reply": "30 с", "resolution": "1 ч 30 мин"}
    assert "Ольга" not in html
    assert "&lt;b&gt;Спасибо&lt;/b&gt;, всё ясно" in html and "<b>Спасибо" not in html  # the visitor's words, escaped
    assert 'aria-label="4 из 5">★★★★☆<' in html
    assert "Обещанный первый ответ: в течение 5 мин." in html
    csat = chart_data(html)["csat"]
    assert [o["name"] for o in csat["operators"]] == ["Анна", "Борис"]
    assert csat["operators"][0]["averages"][-1] == 4.5 and csat["operators"][0]["counts"][-1] == 2
    assert 'id="chart-csat"' in html


def test_no_operator_numbers_say_what_brings_them(owner_client, bot):
    html = owner_client.get("/b/demo/").content.decode()
    assert "Операторы ещё не завершили ни одного разговора" in html and 'id="chart-csat"' not in html


def test_the_numbers_read_in_english(owner_client, bot, django_user_model):
    anna = _user(django_user_model, "anna@shop.example", "Anna")
    closed_by(bot, anna, visitor="v1", asked_ago=timedelta(hours=5), reply_after=timedelta(minutes=2),
              close_after=timedelta(minutes=12), stars=4)
    html = owner_client.get("/b/demo/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    cells, row = row_of(html, "Anna")
    assert cells == {"average": "4.0", "count": "1 rating", "first_reply": "2 min", "resolution": "12 min"}
    assert "1 conversation closed" in row and "Operators" in html


def test_ratings_of_conversations_the_bot_resolved_have_a_row_of_their_own(owner_client, bot):
    conversation = Conversation.objects.create(bot=bot, visitor_id="v_bot", state="closed", closed_at=timezone.now())
    ConversationRating.objects.create(bot=bot, conversation=conversation, stars=5)
    html = owner_client.get("/b/demo/").content.decode()
    cells, _row = row_of(html, "Бот, без оператора")
    assert cells["average"] == "5,0" and cells["count"] == "1 оценка" and cells["first_reply"] == "—"


def _team_line(html):
    found = re.search(r'<p class="team-now" id="team-now">(.*?)</p>', html, re.S)
    assert found, "no line on who is on hand"
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_the_card_says_who_is_on_hand_now_and_how_conversations_go_out(
    owner_client, bot, other_bot, django_user_model
):
    from bots.models import Bot, Membership
    from chat import presence

    anna = _user(django_user_model, "anna@shop.example", "Анна")
    boris = _user(django_user_model, "boris@shop.example", "Борис")
    for user in (anna, boris):
        Membership.objects.create(bot=bot, user=user, role="operator")
    stranger = _user(django_user_model, "olga@other.example", "Ольга")
    Membership.objects.create(bot=other_bot, user=stranger, role="operator")
    url = f"/b/{bot.slug}/"
    line = _team_line(owner_client.get(url).content.decode())
    assert line.startswith("Сейчас на месте никого нет — посетитель, который позовёт оператора, сразу увидит")
    assert "Разговор ждёт, пока его возьмёт любой оператор." in line
    presence.presence_seen(anna)
    presence.presence_seen(stranger)  # another bot's operator is never named here
    presence.presence_seen(boris)
    presence.presence_away_set(boris, away=True)
    Bot.objects.filter(pk=bot.pk).update(assignment=Bot.Assignment.IN_TURN, operator_open_limit=3)
    line = _team_line(owner_client.get(url).content.decode())
    assert line.startswith("Сейчас на месте: Анна · отошли или закрыли входящие:")
    assert "Борис" in line and "Ольга" not in line
    assert "Разговоры раздаются по очереди операторам на месте, не больше 3 открытых у каждого." in line
