"""`/b/<slug>/`: the bot's numbers for a period, the charts' data, empty states that say what to
do next, and nothing of another tenant."""

from __future__ import annotations

import json
import re

import pytest

from knowledge.models import Entry, Source
from tests.owner.dashboard.conftest import seed_activity, stats

pytestmark = pytest.mark.django_db


def chart_data(html: str) -> dict:
    found = re.search(r'<script id="overview-data" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_a_new_bot_without_knowledge_is_told_to_add_a_site(owner_client, bot):
    html = owner_client.get("/b/demo/").content.decode()
    assert "Бот пока ничего не знает" in html and 'href="/b/demo/setup/"' in html
    assert stats(html) == {"conversations": 0, "answered": 0, "handed_off": 0, "unanswered": 0, "leads": 0,
                           "thumbs_down": 0, "review_pending": 0}
    assert "Пока нет проверенных ответов" in html and "Вопросов без ответа не было." in html


def test_a_bot_with_knowledge_but_no_visitors_is_told_to_install_the_snippet(owner_client, bot):
    source = Source.objects.create(bot=bot, kind="manual", title="Вопросы и ответы")
    Entry.objects.create(bot=bot, source=source, kind="qa", title="Доставка?", text="Да.")
    html = owner_client.get("/b/demo/").content.decode()
    assert "Бот пока ничего не знает" not in html
    assert "Разговоров пока нет" in html and 'href="/b/demo/setup/#snippet"' in html


def test_the_numbers_of_the_period_and_the_charts(owner_client, bot):
    seed_activity(bot, days_ago=1)
    seed_activity(bot, days_ago=40, conversations=2)  # outside 7 and 30 days, inside 90
    html = owner_client.get("/b/demo/?days=30").content.decode()
    assert stats(html) == {"conversations": 3, "answered": 2, "handed_off": 1, "unanswered": 0, "leads": 1,
                           "thumbs_down": 2, "review_pending": 2}
    assert "Разговоров пока нет" not in html and "Бот пока ничего не знает" in html  # still no knowledge
    assert "Есть ли доставка в Казань?" in html and "Есть ли доставка в Казань? (иначе)" in html
    data = chart_data(html)
    assert len(data["weeks"]) == 6 and data["accuracy"][-1] == 1.0 and sum(data["gaps"]) == 1
    assert {o["kind"]: sum(o["counts"]) for o in data["outcomes"]}["answered"] == 2
    assert 'id="chart-accuracy"' in html and 'id="chart-outcomes"' in html and 'id="chart-gaps"' in html
    wide = stats(owner_client.get("/b/demo/?days=90").content.decode())
    assert wide["conversations"] == 5 and wide["answered"] == 3 and wide["handed_off"] == 2


def test_conversations_are_counted_per_channel_once_a_messenger_has_some(owner_client, bot):
    from chat.models import Conversation

    Conversation.objects.create(bot=bot, visitor_id="v_site")
    assert 'id="by-channel"' not in owner_client.get("/b/demo/").content.decode()  # the widget alone: nothing to split
    for chat in ("tg:1", "tg:2"):
        Conversation.objects.create(bot=bot, visitor_id=chat, channel=Conversation.Channel.TELEGRAM)
    html = owner_client.get("/b/demo/").content.decode()
    assert re.search(r'id="by-channel">По каналам: виджет на сайте — 1, Telegram — 2\.<', html)
    assert stats(html)["conversations"] == 3


def test_an_unknown_period_falls_back_to_thirty_days(owner_client, bot):
    html = owner_client.get("/b/demo/?days=abc").content.decode()
    assert 'href="?days=30" aria-current="true"' in html


def test_the_page_costs_a_fixed_number_of_queries(owner_client, bot, django_assert_max_num_queries):
    seed_activity(bot, days_ago=1)
    # 22 for the bot's numbers (2 of them the live counts: chat.selectors.live_counts), 3 for the
    # operators' card: stars by week, the times of the conversations operators closed, the latest
    # comments (owner/dashboard/operators.py).
    with django_assert_max_num_queries(25):
        owner_client.get("/b/demo/")
    seed_activity(bot, days_ago=2, conversations=6)
    with django_assert_max_num_queries(25):
        owner_client.get("/b/demo/")


def test_user_text_is_escaped(owner_client, bot):
    bot.name = "<script>alert(1)</script>"
    bot.save(update_fields=["name"])
    html = owner_client.get("/b/demo/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("path", ["/b/other/", "/b/other/setup/", "/b/other/knowledge/", "/b/missing/"])
def test_another_tenants_pages_are_404_like_missing_ones(owner_client, other_bot, path):
    assert owner_client.get(path).status_code == 404


def test_the_overview_in_english(owner_client, bot):
    html = owner_client.get("/b/demo/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "The bot knows nothing yet" in html and "Add a site" in html and "conversations" in html


LABELS = re.compile(r'data-stat="(\w+)">(\d+)</div><div class="label">([^<·]*)')


@pytest.mark.parametrize(("language", "expected"), [
    ("ru", {"conversations": "разговора", "handed_off": "передан оператору", "leads": "оставил контакт",
            "thumbs_down": "ответа оценили плохо", "review_pending": "ждёт проверки"}),
    ("en", {"conversations": "conversations", "handed_off": "handed to an operator", "leads": "left a contact",
            "thumbs_down": "answers rated down", "review_pending": "awaiting review"}),
])
def test_each_numbers_label_takes_the_form_of_its_number(owner_client, bot, language, expected):
    """3 разговора, 1 передан оператору, 1 оставил контакт, 2 ответа оценили плохо, 1 ждёт проверки."""
    seed_activity(bot, days_ago=1)
    html = owner_client.get("/b/demo/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    labels = {name: label.strip() for name, _value, label in LABELS.findall(html)}
    assert {name: labels[name] for name in expected} == expected, stats(html)


@pytest.mark.parametrize(("language", "week"), [("ru", r"\d{1,2} [а-я]+"), ("en", r"[A-Z][a-z]+ \d{1,2}")])
def test_the_charts_weeks_are_dates_of_the_pages_language(owner_client, bot, language, week):
    """«26 октября», not «26 Окт» (Django's Russian "M" is a capitalised stem); "October 26" in English.
    The charts get them as text from the server and the table shows the same."""
    seed_activity(bot, days_ago=1)
    html = owner_client.get("/b/demo/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    weeks = chart_data(html)["weeks"]
    assert weeks and all(re.fullmatch(week, label) for label in weeks), weeks
    assert f"<td>{weeks[-1]}</td>" in html


def test_the_way_to_the_review_queue_is_named_as_its_tab(owner_client, bot):
    """The count of answers waiting and the empty accuracy chart lead to this bot's queue, by the tab's name."""
    queue = f'href="/admin/review/reviewitem/?bot={bot.pk}"'
    html = owner_client.get("/b/demo/").content.decode()
    assert html.count(queue) >= 3  # the tab, the «ждут проверки» count, the empty chart's link
    assert f'{queue}>Открыть «Очередь проверки»</a>' in html
    assert 'href="/answers/"' not in html and "«Ответы»" not in html
    english = owner_client.get("/b/demo/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"{queue}>Open “Review queue”</a>" in english
