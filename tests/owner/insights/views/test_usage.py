"""The usage page: the billing lines per day, route and model (chart data and tables), the monthly
budget form and the budget's state."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bots.models import Bot
from llm import budget
from llm.models import Usage

pytestmark = pytest.mark.django_db


def line(bot: Bot, *, cost: str, route: str = "chat", model: str = "claude-haiku-4-5", days_ago: int = 0) -> Usage:
    return Usage.objects.create(bot=bot, route=route, purpose="answer", provider="anthropic", model=model,
                                input_tokens=1000, output_tokens=200, cost_usd=Decimal(cost),
                                created_at=timezone.now() - timedelta(days=days_ago))


def chart_of(page: str) -> dict:
    start = page.index('<script id="usage-data" type="application/json">') + len(
        '<script id="usage-data" type="application/json">')
    return json.loads(page[start:page.index("</script>", start)])


def test_the_page_sums_per_day_route_and_model(owner_client, bot, other_bot):
    line(bot, cost="0.010000")
    line(bot, cost="0.020000")
    line(bot, cost="0.500000", route="review_reply", model="claude-sonnet-4-6", days_ago=1)
    line(other_bot, cost="7.000000")  # another tenant's bill
    response = owner_client.get("/b/demo/usage/")
    assert response.status_code == 200
    page = response.content.decode()
    chart = chart_of(page)
    assert len(chart["labels"]) == 30
    routes = {d["label"]: d["data"] for d in chart["datasets"]}
    chat, reviews = "Ответ в чате", "Ответ на отзыв покупателя"  # the routes by their words, never their codes
    assert set(routes) == {chat, reviews}
    assert routes[chat][-1] == pytest.approx(0.03) and routes[reviews][-2] == pytest.approx(0.5)
    rows = response.context["rows"]
    assert [(r["route"], r["model"], r["calls"]) for r in rows] == [
        (chat, "claude-haiku-4-5", 2), (reviews, "claude-sonnet-4-6", 1)]
    assert ">review_reply<" not in page
    assert response.context["period_cost"] == Decimal("0.53")
    assert "7.0000" not in page
    assert "chart.umd.min.js" in page


def test_an_empty_period_says_so_without_a_chart(owner_client, bot):
    line(bot, cost="0.1", days_ago=40)
    page = owner_client.get("/b/demo/usage/?days=7").content.decode()
    assert "За этот период модель не вызывалась." in page and "usage-chart" not in page
    assert owner_client.get("/b/demo/usage/?days=abc").context["days"] == 30


def test_the_owner_sets_a_budget_and_sees_it_spent(owner_client, bot):
    line(bot, cost="2.500000")
    response = owner_client.post("/b/demo/usage/", {"budget": "2"})
    assert response.status_code == 302
    bot.refresh_from_db()
    assert bot.monthly_budget_usd == Decimal("2.00")
    page = owner_client.get("/b/demo/usage/").content.decode()
    assert 'data-over="1"' in page and "Бюджет месяца исчерпан" in page
    assert budget.over_budget(bot)
    owner_client.post("/b/demo/usage/", {"budget": ""})  # no budget: no limit
    assert not budget.over_budget(Bot.objects.get(pk=bot.pk))
    assert "без ограничения" in owner_client.get("/b/demo/usage/").content.decode()


@pytest.mark.parametrize("value", ["-5", "много", "1" * 12])
def test_a_bad_budget_gets_an_error_and_keeps_the_saved_one(owner_client, bot, value):
    owner_client.post("/b/demo/usage/", {"budget": "10"})
    response = owner_client.post("/b/demo/usage/", {"budget": value})
    assert response.status_code == 400
    assert response.context["form"].errors["budget"]
    assert Bot.objects.get(pk=bot.pk).monthly_budget_usd == Decimal("10.00")


def test_another_owner_gets_404(other_client, bot):
    assert other_client.get("/b/demo/usage/").status_code == 404
    assert other_client.post("/b/demo/usage/", {"budget": "0"}).status_code == 404
    assert Bot.objects.get(pk=bot.pk).monthly_budget_usd is None


def test_the_pages_speak_english_with_the_language_switch(owner_client, bot):
    from django.conf import settings

    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    usage = owner_client.get("/b/demo/usage/").content.decode()
    assert "Model usage and costs" in usage and "Save budget" in usage and "no limit" in usage
    testing = owner_client.get("/b/demo/testing/").content.decode()
    assert "Testing the bot" in testing and "Question sets" in testing and "New set" in testing
    assert "Bot members" in owner_client.get("/b/demo/members/").content.decode()


@pytest.mark.parametrize(("language", "spent", "tokens", "heading", "day"), [
    ("ru", "0,03 $", "2\xa0000", r"Бюджет: [а-я]+ 20\d\d<", r"\d{1,2} [а-я]+"),
    ("en", "0.03 $", "2,000", r"Budget: [A-Z][a-z]+ 20\d\d<", r"[A-Z][a-z]+ \d{1,2}"),
])
def test_numbers_and_dates_are_written_the_way_the_pages_language_writes_them(owner_client, bot, language, spent,
                                                                              tokens, heading, day):
    """A decimal comma and a grouped thousand in Russian («0,03 $», «2 000»), a dot and a comma in English;
    the month inside the heading in lower case («Бюджет: декабрь 2026», "Budget: December 2026") and the
    chart's days as the language writes a date («2 декабря», "December 2")."""
    line(bot, cost="0.010000")
    line(bot, cost="0.020000")
    page = owner_client.get("/b/demo/usage/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f'<div class="value">{spent}</div>' in page
    assert f"<td>{tokens}</td>" in page  # the model's input tokens: 2 lines of 1000
    assert re.search(heading, page), page[page.index("budget-title"):][:200]
    assert all(re.fullmatch(day, label) for label in chart_of(page)["labels"]), chart_of(page)["labels"][:3]


@pytest.mark.parametrize(("lang", "words"), [
    ("ru", ("Токены — кусочки слов", "бот до конца месяца отвечает без модели")),
    ("en", ("Tokens are pieces of words", "the bot answers without the model until the month ends")),
])
def test_tokens_and_the_budget_are_explained(owner_client, bot, lang, words):
    line(bot, cost="0.01")
    page = owner_client.get("/b/demo/usage/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for text in words:
        assert text in page, text
