"""Typos without a model: the chain reads a misspelt question against the bot's own words and the
dictionary (knowledge/spelling.py), asks once more, and says what it understood. Real search over
the shop's embedded entries (tests/chat/conftest.py), LLM_PROVIDER none unless a model is the point."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from answers import pipeline
from tests import fakes
from tests.fakes.messages_api import tool_use

pytestmark = pytest.mark.django_db
fake_llm = fakes.fake_llm

MISSPELT = "Как оплтаить закз?"
PAYMENT_LINK = {"url": "https://shop.example/payment", "title": "Оплата"}


@pytest.fixture
def no_model(settings):
    settings.LLM_PROVIDER = "none"
    return settings


def ask(bot, text: str) -> pipeline.Reply:
    return pipeline.answer(bot=bot, text=text, history=[])


def test_a_misspelt_question_is_answered_and_the_reply_says_what_it_understood(knowledge, shop, no_model):
    reply = ask(shop, MISSPELT)

    assert reply.text.startswith("Вы имели в виду: Как оплатить заказ?\nОплатить заказ можно картой")
    assert reply.links == [PAYMENT_LINK] and not reply.flags.get("unanswered")
    assert reply.llm_meta["route"] == "retrieval"
    assert reply.llm_meta["spelling"] == {
        "understood": "Как оплатить заказ?", "changes": [["оплтаить", "оплатить"], ["закз", "заказ"]],
    }
    assert reply.timings["spelling"] > 0


def test_a_question_that_answers_as_written_is_not_read_again(knowledge, shop, no_model):
    reply = ask(shop, "Как оплатить заказ?")

    assert reply.links == [PAYMENT_LINK] and not reply.text.startswith("Вы имели в виду")
    assert "spelling" not in reply.llm_meta  # the speller found nothing to change: no second pass


def test_a_misspelt_question_that_finds_the_wrong_page_is_answered_as_meant(knowledge, shop, no_model):
    """«олпатить» costs the payment entry its words; «заказ с доставкой» alone finds the delivery
    entry. Every fix is a word the site uses, so the reading as meant answers, and says so."""
    assert pipeline.chain(pipeline.Turn(bot=shop, history=[], language="ru"), "Как олпатить заказ с доставкой?",
                          retry=False).links[0]["url"] == "https://shop.example/delivery"  # as written

    reply = ask(shop, "Как олпатить заказ с доставкой?")

    assert reply.text.startswith("Вы имели в виду: Как оплатить заказ с доставкой?\n")
    assert reply.links == [PAYMENT_LINK]
    assert reply.llm_meta["spelling"]["changes"] == [["олпатить", "оплатить"]]


def test_a_fix_the_site_never_writes_does_not_replace_an_answer(knowledge, shop, no_model):
    """«пенсонер» reads as «пенсионер», a word on no page of the shop: the answer the text found as
    written stands, with no «Вы имели в виду»."""
    reply = ask(shop, "Как оплатить заказ пенсонеру?")

    assert reply.links == [PAYMENT_LINK] and not reply.text.startswith("Вы имели в виду")
    assert "spelling" not in reply.llm_meta and reply.timings["spelling"] >= 0


def test_a_question_of_real_words_the_site_does_not_answer_stays_unanswered(knowledge, shop, no_model):
    reply = ask(shop, "Есть ли у вас парковка для вертолёта на крыше офиса?")

    assert reply.flags["unanswered"] is True and reply.links == []
    assert "spelling" not in reply.llm_meta and not reply.text.startswith("Вы имели в виду")


def test_an_english_reply_says_it_in_english(knowledge, shop, no_model):
    shop.language, shop.answers_in_visitor_language = "en", False

    reply = ask(shop, MISSPELT)

    assert reply.text.startswith("Did you mean: Как оплатить заказ?\n") and reply.links == [PAYMENT_LINK]


def test_the_rules_turn_runs_no_speller_and_keeps_its_statement_count(knowledge, shop, no_model):
    ask(shop, "Здравствуйте!")  # the voice's and the hours' first reads aside
    with CaptureQueriesContext(connection) as greeting:
        reply = ask(shop, "Здравствуйте!")

    assert reply.intent == "greeting" and "spelling" not in reply.timings
    assert len(greeting.captured_queries) == 0
    assert not any("knowledge_entry" in query["sql"] for query in greeting.captured_queries)


@pytest.mark.parametrize("text", ["оплта " * 1000, "🙂🙂🙂", "oплтаа заказа", "\ud800 оплтаить закз"])
def test_bad_input_gets_a_reply_never_a_traceback(knowledge, shop, no_model, text):
    reply = ask(shop, text)

    assert reply.text and "\ud800" not in reply.text


def test_with_a_model_the_models_fixed_reading_is_the_retry_not_the_speller(knowledge, shop, fake_llm):
    fake_llm.script(tool_use({"intent": "question", "source": -1, "answer": "", "product_query": "", "fixed": ""}))

    reply = ask(shop, MISSPELT)

    assert len(fake_llm.requests) == 1 and reply.flags["unanswered"] is True
    assert "spelling" not in reply.llm_meta and reply.llm_meta["retried_with_fixed"] is False


def test_a_misspelt_topic_word_read_as_goods_is_read_again_as_the_question(knowledge, shop, no_model):
    """«скока стоит дастафка»: the rules see a price of goods in the unknown word, the catalog has no
    such goods; the speller's reading is the delivery question the shop's page answers."""
    from knowledge.catalog import catalog

    feed = ("id;name;price;category;vendor;available;url\n"
            "k-1;Чайник Ключ;2490;Кухонная техника;Ключ;да;https://shop.example/p/k-1\n")
    assert catalog.catalog_import_bytes(bot=shop, data=feed.encode(), name="price.csv").run.status == "done"
    from behavior.intents import classify

    assert classify("Скока стоит дастафка по Москве?").name == "product"

    reply = ask(shop, "Скока стоит дастафка по Москве?")

    assert reply.text.startswith("Вы имели в виду: Скока стоит доставка по Москве?")
    assert reply.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert reply.cards == [] and not reply.flags.get("unanswered")
    goods = ask(shop, "Сколько стоит утюг?")  # a real product word: the catalog's honest no-match stands
    assert goods.flags.get("unanswered") and "spelling" not in goods.llm_meta
