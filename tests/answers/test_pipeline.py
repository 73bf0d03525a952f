"""The no-model answer chain: rules first, then the best entry, then an honest "no exact answer"."""

import pytest

from answers import excerpts, replies
from answers.pipeline import answer, excerpt
from bots.models import Bot
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION


def _bot(**fields):
    defaults = {"name": "Демо-магазин", "slug": "demo", "site_url": "https://shop.example/", "language": "ru"}
    return Bot(**(defaults | fields))


def _ask(bot, text):
    return answer(bot=bot, text=text, history=[])


def test_rules_answer_without_search():
    bot = _bot()  # never saved: a search would have no bot to scope to
    whoami, greeting, thanks, order = (_ask(bot, text) for text in ("Вы бот?", "Здравствуйте", "Спасибо!",
                                                                     "Где мой заказ?"))
    assert whoami.text.startswith("Я — виртуальный помощник «Демо-магазин»")
    assert greeting.intent == "greeting"
    assert thanks.text == "Пожалуйста! Если появятся ещё вопросы — пишите."
    for reply in (whoami, greeting, thanks):  # answered by the rules; no search ran
        assert reply.llm_meta["route"] == "rules" and reply.timings["search"] == 0 and reply.sources == []
    # an order goes to the order route (tests/knowledge/catalog): this bot has no order endpoint to ask
    assert order.intent == "order" and "номер заказа" in order.text and order.llm_meta["route"] == "order"
    assert order.timings["search"] == 0 and order.sources == []


def test_asking_for_a_person_requests_the_operator_state():
    reply = _ask(_bot(), "Соедините меня с менеджером")
    assert reply.intent == "operator" and reply.state == "waiting_operator"
    assert reply.flags == {"escalation": True}
    assert reply.text == "Сейчас позову оператора."


def test_without_handoff_it_says_how_to_reach_the_company():
    reply = _ask(_bot(handoff_enabled=False), "Позовите оператора")
    assert reply.state is None and reply.flags == {"escalation": True}
    assert "https://shop.example/" in reply.text and reply.buttons == []


def test_english_bots_speak_english():
    bot = _bot(language="en", name="Demo Shop")
    assert _ask(bot, "who are you?").text.startswith("I am the virtual assistant of Demo Shop")
    assert replies.operator_button(bot) == {"id": "operator", "label": "Call an operator"}


def test_both_languages_have_every_canned_text():
    assert set(replies.TEXTS["ru"]) == set(replies.TEXTS["en"])


def test_timings_are_reported_in_milliseconds():
    reply = _ask(_bot(), "Привет")
    assert set(reply.timings) == {"rules", "search", "llm", "total"}
    assert reply.timings["llm"] == 0.0 and reply.timings["total"] >= reply.timings["rules"]


def test_an_excerpt_keeps_whole_sentences():
    text = "Первое предложение. " * 10 + "Последнее."
    short = excerpt(text, limit=60)
    assert short == "Первое предложение. Первое предложение. Первое предложение."
    assert excerpt("Коротко.") == "Коротко."


def test_an_excerpt_never_cuts_a_sentence_unless_one_sentence_is_too_long_to_show():
    assert excerpt("Короткое первое. " + "Длинное " * 40 + "второе.", limit=50) == "Короткое первое."
    text = "слово " * 200  # one "sentence" of 1,200 characters: cut at a word, the only cut there is
    short = excerpt(text, limit=50)
    assert short.endswith("слово…") and len(short) <= excerpts.HARD_LIMIT + 1


@pytest.mark.django_db
def test_a_good_match_answers_from_the_entry(knowledge, shop):
    reply = _ask(shop, DELIVERY_QUESTION)
    assert reply.source_entry_id == knowledge["delivery"].pk
    assert reply.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert reply.text.startswith("Доставка по Москве")
    assert reply.flags.get("unanswered") is not True
    assert reply.confidence is not None and reply.confidence >= shop.match_threshold


@pytest.mark.django_db
def test_a_match_below_the_confidence_threshold_is_flagged(knowledge, shop):
    shop.confidence_threshold = 0.99
    reply = _ask(shop, DELIVERY_QUESTION)
    assert reply.source_entry_id is not None and reply.flags["low_confidence"] is True


@pytest.mark.django_db
def test_no_match_says_so_and_offers_a_person(knowledge, shop):
    reply = _ask(shop, UNKNOWN_QUESTION)
    assert reply.text == "К сожалению, точного ответа у меня нет. Пригласить оператора? Он во всём разберётся."
    assert reply.buttons == [{"id": "operator", "label": "Позвать оператора"}]
    assert reply.flags == {"low_confidence": True, "unanswered": True}
    assert reply.links == [] and reply.source_entry_id is None


@pytest.mark.django_db
def test_no_match_without_handoff_has_no_button(knowledge, shop):
    shop.handoff_enabled = False
    reply = _ask(shop, UNKNOWN_QUESTION)
    assert reply.text == "К сожалению, точного ответа у меня нет." and reply.buttons == []


@pytest.mark.django_db
def test_another_bots_knowledge_is_never_used(knowledge, other_bot):
    reply = _ask(other_bot, DELIVERY_QUESTION)
    assert reply.source_entry_id is None and reply.flags["unanswered"] is True
