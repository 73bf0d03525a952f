"""The monthly model budget: over it the chain answers without the model (retrieval-only), the
check reads the cache, not the month's rows, and the owners get one e-mail per month."""

from __future__ import annotations

import re
import time
from decimal import Decimal

import pytest

from answers import pipeline
from bots.models import Bot
from llm import budget
from llm.models import Usage
from tests import fakes
from tests.chat import conftest as chat
from tests.chat.conftest import DELIVERY_QUESTION
from tests.fakes.messages_api import tool_use

fake_llm = fakes.fake_llm
shop, knowledge = chat.shop, chat.knowledge  # the chat tests' shop and its three embedded entries
SAID = {"intent": "question", "source": 0, "answer": "Доставка по Москве стоит 300 ₽.", "product_query": "",
        "fixed": ""}
# claude-haiku-4-5 at $1 / $5 per million tokens: 100k in + 100k out = $0.60
EXPENSIVE = {"input_tokens": 100_000, "output_tokens": 100_000}


def ask(bot: Bot) -> pipeline.Reply:
    return pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[])


@pytest.mark.django_db
def test_over_budget_the_chain_answers_from_knowledge_without_asking_the_model(shop, knowledge, fake_llm):
    budget.budget_set(bot=shop, limit=Decimal("0.50"))
    fake_llm.script(tool_use(SAID, **EXPENSIVE), tool_use(SAID))
    first = ask(shop)
    assert first.llm_meta["route"] == "sourced" and first.text == SAID["answer"]
    assert budget.month_spent(shop) == Decimal("0.6")
    calls = len(fake_llm.requests)

    second = ask(shop)
    assert len(fake_llm.requests) == calls  # the model was not asked
    assert second.llm_meta["route"] == "retrieval" and second.llm_meta["error"] == "over_budget"
    assert second.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert Usage.objects.filter(bot=shop).count() == 1  # nothing billed for the second answer

    budget.budget_set(bot=shop, limit=Decimal("5"))  # raised: the model answers again at once
    assert ask(shop).llm_meta["route"] == "sourced"


@pytest.mark.django_db
def test_a_bot_without_a_budget_is_never_over_and_the_check_costs_no_query(shop, django_assert_num_queries):
    Usage.objects.create(bot=shop, route="chat", purpose="answer", provider="anthropic", model="m",
                         cost_usd=Decimal("1000"))
    with django_assert_num_queries(0):
        assert budget.over_budget(shop) is False


@pytest.mark.django_db
def test_the_months_total_is_summed_once_then_moved_by_each_billing_line(shop, django_assert_num_queries):
    Usage.objects.create(bot=shop, route="chat", purpose="answer", provider="anthropic", model="m",
                         cost_usd=Decimal("0.25"))
    budget.budget_set(bot=shop, limit=Decimal("1"))
    assert budget.month_spent(shop) == Decimal("0.25")
    budget.spent_add(bot_id=shop.pk, cost=Decimal("0.80"), at=budget.month_start())
    with django_assert_num_queries(0):  # a stale Bot instance of a socket still sees the new limit
        stale = Bot(pk=shop.pk, monthly_budget_usd=None)
        assert budget.budget_status(stale).spent == Decimal("1.05")
        assert budget.budget_status(stale).limit == Decimal("1.00")


@pytest.mark.django_db
def test_last_months_lines_do_not_count(shop):
    from datetime import timedelta

    Usage.objects.create(bot=shop, route="chat", purpose="answer", provider="anthropic", model="m",
                         cost_usd=Decimal("9"), created_at=budget.month_start() - timedelta(seconds=1))
    budget.budget_set(bot=shop, limit=Decimal("1"))
    assert budget.month_spent(shop) == 0 and not budget.over_budget(shop)


@pytest.mark.django_db
@pytest.mark.parametrize("limit", ["-1", "abc", "1e12", "NaN"])
def test_a_bad_budget_is_refused_and_the_old_one_kept(shop, limit):
    from django.core.exceptions import ValidationError

    budget.budget_set(bot=shop, limit=Decimal("3"))
    with pytest.raises(ValidationError):
        budget.budget_set(bot=shop, limit=limit)
    assert Bot.objects.get(pk=shop.pk).monthly_budget_usd == Decimal("3.00")


@pytest.mark.django_db(transaction=True)
def test_the_owners_get_one_email_per_month_when_the_budget_is_spent(
    shop, knowledge, fake_llm, smtp_server, celery_worker_thread,
):
    budget.budget_set(bot=shop, limit=Decimal("0.10"))
    fake_llm.script(tool_use(SAID, **EXPENSIVE))
    ask(shop)  # spends $0.60
    for _ in range(3):
        assert ask(shop).llm_meta["error"] == "over_budget"
    (mail,) = smtp_server.wait_for(1)
    assert mail["X-Envelope-To"] == "owner@shop.example"
    assert mail["Subject"].strip() == "Бюджет на модель исчерпан: «Демо-магазин»"
    body = mail.get_content()
    assert "0,60 $ из 0,10 $" in body and "/b/demo/usage/" in body  # the decimal comma of Russian
    assert re.search(r"за [а-я]+ 20\d\d: ", body), body  # «за декабрь 2026», the month in lower case
    time.sleep(1.0)
    assert len(smtp_server.messages) == 1
    assert Bot.objects.get(pk=shop.pk).budget_alerted_month == budget.month_label()
