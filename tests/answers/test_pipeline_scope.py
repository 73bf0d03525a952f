"""Out of scope means no answer: without a model, the chain shows no entry about something else than
the question, however close its vector (knowledge/scope.py, the chain's step 3), and never a bare
«Да»/«Нет» without the question it answers (excerpts.py). On the demo shop, crawled whole."""

from __future__ import annotations

import pytest

from answers import pipeline
from answers.excerpts import excerpt
from answers.replies import OPERATOR_BUTTON_ID
from bots.models import Bot
from tests import fakes
from tests.fakes.messages_api import tool_use

fake_llm = fakes.fake_llm  # the fake Messages API fixture (tests/chat/conftest does not load it)

CHARITY = "Вы принимаете пожертвования на благотворительность?"


def close_vectors(bot: Bot) -> Bot:
    """The bot answering whatever its best entry scores: what only the subject check can refuse."""
    bot.match_threshold = 0.0
    return bot


def ask(bot: Bot, text: str) -> pipeline.Reply:
    return pipeline.answer(bot=bot, text=text, history=[])


def refused(reply: pipeline.Reply) -> bool:
    return bool(reply.flags.get("unanswered")) and reply.links == [] and reply.llm_meta["route"] == "no_answer"


@pytest.mark.django_db
def test_a_charity_question_gets_the_no_answer_and_the_operator_button_however_close_its_vector(demo_shop):
    reply = ask(close_vectors(demo_shop), CHARITY)
    assert refused(reply), (reply.text, reply.llm_meta, reply.source_entry_id)
    assert reply.buttons and reply.buttons[0]["id"] == OPERATOR_BUTTON_ID
    assert set(reply.llm_meta["off_subject"]) == {"пожертвования", "благотворительность"}


@pytest.mark.django_db
def test_a_brand_the_shop_never_mentions_is_not_answered_by_its_category(demo_shop):
    reply = ask(close_vectors(demo_shop), "Продаёте ли вы кондиционеры Daikin?")
    assert refused(reply) and reply.llm_meta["off_subject"] == ["Daikin"]


@pytest.mark.django_db
def test_the_bare_yes_of_another_question_is_not_shown_for_cars(demo_shop):
    """«Продаёте ли вы автомобили?» lay next to the FAQ «Продаёте ли вы уценённые товары? — Да, …»."""
    reply = ask(demo_shop, "Продаёте ли вы автомобили?")
    assert refused(reply) and reply.llm_meta["off_subject"] == ["автомобили"]


@pytest.mark.django_db
def test_a_yes_comes_after_the_question_it_answers(demo_shop):
    reply = ask(demo_shop, "Сколько бонусов за отзыв с фото?")
    question, answer = reply.text.split("\n", 1)
    assert question == "Можно ли оставить отзыв о товаре?"
    assert answer.startswith("Да, ") and "100 бонусов" in answer


@pytest.mark.django_db
@pytest.mark.parametrize(("question", "page"), [
    ("Можно забрать посудомойку в пункте на Лиговском?", "/pickup/spb-ligovsky/"),  # a rare word the site has
    ("отсрочка платежа для юрлиц возможна?", "/payment/legal-entities/"),  # «юрлицо»: rare, and nowhere on the site
    ("Какой пылесос лучше, если дома кошка?", "/blog/kak-vybrat-pylesos/"),  # a word of its own beside the site's
    ("доставкаа в казань сколько дней", "/delivery/regions/"),  # a typo and a place
])
def test_answerable_questions_with_rare_or_unknown_words_are_still_answered(demo_shop, question, page):
    reply = ask(demo_shop, question)
    assert not reply.flags.get("unanswered"), reply.llm_meta
    assert page in reply.links[0]["url"]


@pytest.mark.django_db
def test_a_place_the_site_does_not_name_never_refuses_on_its_own(demo_shop):
    reply = ask(close_vectors(demo_shop), "Доставляете в Тверь?")
    assert not reply.flags.get("unanswered") and "/delivery/" in reply.links[0]["url"]


@pytest.mark.django_db
def test_a_question_in_english_is_not_judged_by_the_russian_lexicon(demo_shop):
    reply = ask(close_vectors(demo_shop), "Do you accept donations to charity?")
    assert "off_subject" not in reply.llm_meta and not reply.flags.get("unanswered")


@pytest.mark.django_db
@pytest.mark.parametrize("text", [
    "благотворительность " * 300 + "?",  # over 5,000 characters
    "😀🙂🎉",
    "Продаёте Daikin кондиционеры or Bosch чайники?",
    "пожертвования \ud800 на благотворительность",
])
def test_bad_input_gets_a_reply_never_a_traceback(demo_shop, text):
    reply = ask(close_vectors(demo_shop), text)
    assert reply.text


@pytest.mark.django_db
def test_with_a_model_the_words_do_not_decide(demo_shop, fake_llm):
    """The model reads the question against every source and may say it has no answer; what it
    cites is checked fact by fact (checks.py). The subject check is for the excerpt shown blind."""
    fake_llm.script(tool_use({"intent": "question", "source": 0, "answer": "Об этом — на странице по ссылке.",
                              "product_query": "", "fixed": ""}))
    reply = ask(close_vectors(demo_shop), CHARITY)
    assert reply.llm_meta["route"] == "sourced" and "off_subject" not in reply.llm_meta


# --- the «Да» rule on texts ------------------------------------------------------------------------------


def test_a_bare_yes_after_a_heading_question_keeps_the_question_first():
    shown = excerpt("Да, можно.", "Можно вернуть?", heading="Можно ли вернуть товар без чека?")
    assert shown == "Можно ли вернуть товар без чека?\nДа, можно."


def test_a_yes_after_its_own_question_in_the_text_keeps_it():
    assert excerpt("Можно ли вернуть? Да, в течение 14 дней.", "вернуть", heading="Возврат") == (
        "Можно ли вернуть? Да, в течение 14 дней.")


def test_a_yes_with_no_question_loses_its_yes_and_a_bare_yes_is_not_shown():
    assert excerpt("Да. Подробнее о партнерской программе читайте в документации.", "партнеры",
                   heading="Партнеры") == "Подробнее о партнерской программе читайте в документации."
    assert excerpt("Нет.", "партнеры", heading="Партнеры") == ""


def test_a_word_that_merely_begins_with_yes_is_untouched():
    assert excerpt("Данные хранятся в России.", "данные") == "Данные хранятся в России."
