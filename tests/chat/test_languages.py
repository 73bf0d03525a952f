"""The visitor's language: an English question to a bot that allows it is answered in English —
canned replies, refusals, errors — and finds the Russian page through the model's translation.

Cross-cutting: the whole chain in the visitor's language (chat/frames.py, chat/services.py, chat/leads.py,
answers/pipeline.py, answers/replies.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from answers import pipeline, replies
from bots.models import Bot
from chat import frames
from chat.exceptions import BadFrame, InvalidField, RateLimited, ValidationFailed
from chat.services import clean_text
from tests import fakes
from tests.chat.conftest import ORIGIN
from tests.fakes.messages_api import tool_use

fake_llm = fakes.fake_llm
UNKNOWN_EN = "Do you have a helipad on the roof of your office?"


def said(answer: str = "", *, source: int = -1, intent: str = "question", fixed: str = "") -> dict[str, Any]:
    return {"intent": intent, "source": source, "answer": answer, "product_query": "", "fixed": fixed}


def _bot(**fields: Any) -> Bot:
    defaults = {"name": "Ромашка", "slug": "romashka", "site_url": "https://shop.example/", "language": "ru"}
    return Bot(**(defaults | fields))


@pytest.mark.parametrize(
    ("text", "language"),
    [("What is your return policy?", "en"), ("Сколько стоит доставка?", "ru"), ("ok", "ru"), ("iPhone 15 есть?", "ru"),
     ("Доставка в Kazan, how long?", "ru")],
)
def test_the_reply_language_follows_the_visitors_letters(text, language):
    assert replies.reply_language(_bot(), text) == language


def test_a_bot_that_keeps_its_language_answers_in_it():
    assert replies.reply_language(_bot(answers_in_visitor_language=False), "What is your return policy?") == "ru"
    assert replies.reply_language(_bot(language="en", answers_in_visitor_language=False), "Привет, как дела") == "en"


def test_canned_replies_take_the_language_and_say_keeps_its_old_form():
    bot = _bot()
    assert replies.say(bot, "no_answer") == "К сожалению, точного ответа у меня нет."
    assert replies.say(bot, "no_answer", language="en") == "Sorry, I do not have an exact answer to that."
    expected = replies.TEXTS["ru"]["handoff_disabled"].format(site=": x")
    assert replies.say(bot, "handoff_disabled", site=": x") == expected


def test_an_english_question_to_a_russian_bot_gets_english_rules_replies():
    bot = _bot()
    whoami = pipeline.answer(bot=bot, text="who are you?", history=[])
    assert whoami.text.startswith("I am the virtual assistant of Ромашка")


@pytest.mark.django_db
def test_a_refusal_is_in_the_visitors_language(knowledge, shop, settings):
    settings.LLM_PROVIDER = "none"
    english = pipeline.answer(bot=shop, text=UNKNOWN_EN, history=[])
    russian = pipeline.answer(bot=shop, text="Есть ли у вас вертолётная площадка на крыше?", history=[])

    assert english.text == (
        "Sorry, I do not have an exact answer to that. Shall I invite an operator? They will sort it out."
    )
    assert english.buttons == [{"id": "operator", "label": "Call an operator"}]
    assert russian.text.startswith("К сожалению, точного ответа у меня нет.")
    assert russian.buttons == [{"id": "operator", "label": "Позвать оператора"}]


@pytest.mark.django_db
def test_an_english_question_finds_the_russian_page_through_the_models_translation(fake_llm, knowledge, shop):
    """Cross-lingual: the first pass finds nothing good, the model gives the question in the site's
    language as `fixed`, the chain searches again with it, and the model answers in English from the
    Russian entry it cites (its figures checked against that entry like any other answer)."""
    answer = "You can return an item within 14 days of purchase if you keep the packaging and the receipt."
    fake_llm.script(
        tool_use(said("", fixed="Какие условия возврата товара?")),
        tool_use(said(answer, source=0, fixed="Какие условия возврата товара?")),
    )

    reply = pipeline.answer(bot=shop, text="What is your return policy?", history=[])

    first, second = fake_llm.requests
    assert first.body["system"][0]["text"].startswith("You are the virtual assistant")
    assert "its translation into that language" in first.body["system"][0]["text"]
    assert '<source number="0">\nВозврат товара:' in second.body["messages"][-1]["content"]
    assert second.body["system"][0]["text"].startswith("You are the virtual assistant")
    assert reply.text == answer and reply.llm_meta["route"] == "sourced"
    assert reply.links == [{"url": "https://shop.example/return", "title": "Возврат товара"}]


@pytest.mark.django_db
def test_an_english_question_gets_the_russian_excerpt_with_an_english_lead_and_the_link(knowledge, shop, settings):
    """No model: the page is found by its meaning (the question shares no word with it), and the
    visitor reads the site's own words under one English line saying they are Russian."""
    settings.LLM_PROVIDER = "none"

    reply = pipeline.answer(bot=shop, text="How many days do I have to return an item?", history=[])

    assert reply.llm_meta["route"] == "retrieval" and not reply.flags.get("unanswered")
    lead, excerpt = reply.text.split("\n", 1)
    assert lead == "Here is what our site says (in Russian):"
    assert excerpt.startswith("Вернуть товар можно в течение 14 дней")
    assert reply.links == [{"url": "https://shop.example/return", "title": "Возврат товара"}]


@pytest.mark.django_db
def test_a_russian_question_gets_no_lead(knowledge, shop, settings):
    settings.LLM_PROVIDER = "none"
    reply = pipeline.answer(bot=shop, text="За сколько дней можно вернуть товар?", history=[])
    assert reply.text.startswith("Вернуть товар можно в течение 14 дней")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "language"),
    [("🙂🙂🙂", "ru"), ("Доставка в Kazan, how long? 🚚", "ru"), ("How much is доставка to Питер?", "ru"),
     ("What about \ud800 returns?", "en"), ("How " + "much " * 1000 + "?", "en"), ("\u200b\u202e", "ru")],
)
def test_bad_input_in_any_letters_gets_a_reply_in_a_language_it_can_read(knowledge, shop, settings, text, language):
    """Emoji only, mixed scripts, a lone surrogate, 5,000 characters: never a traceback; a text with
    no clear language is answered in the bot's."""
    settings.LLM_PROVIDER = "none"
    reply = pipeline.answer(bot=shop, text=text, history=[])
    assert reply.text
    if reply.flags.get("unanswered"):
        assert reply.text.startswith(replies.TEXTS[language]["no_answer"])


def test_errors_speak_the_language_they_are_asked_in():
    with pytest.raises(ValidationFailed) as refused:
        clean_text("а" * 2001)
    assert refused.value.message_in("ru").startswith("Сообщение слишком длинное: не больше 2000 знаков")
    assert refused.value.message_in("en") == "The message is too long: at most 2000 characters. Please shorten it."
    frame = frames.error_frame(RateLimited(12), language="en")
    assert frame == {"type": "error", "code": "rate_limited", "retry_after": 12,
                     "message": "Too many messages in a row. Please wait 12 s and try again."}


def test_every_error_code_has_a_text_in_both_languages():
    keys = {key for key in replies.TEXTS["ru"] if key.startswith("error_")}
    assert keys == {key for key in replies.TEXTS["en"] if key.startswith("error_")}
    assert {"error_too_long", "error_rate_limited", "error_server_error", "error_closed"} <= keys


@pytest.mark.django_db(transaction=True)
async def test_an_english_bot_gets_english_error_frames(shop, connect):
    from tests.chat.conftest import in_db

    shop.language = "en"
    await in_db(lambda: shop.save(update_fields=["language"]))()
    client = await connect(shop, origin=ORIGIN)
    await client.hello()

    await client.send(type="message", client_msg_id="c1", text="   ")
    error = await client.recv()

    assert error["code"] == "empty" and error["message"] == "Please write your question: the message is empty."
    assert json.dumps(error, ensure_ascii=False).count("Напишите") == 0


@pytest.mark.django_db(transaction=True)
async def test_the_welcome_says_whose_language_the_labels_speak(shop, connect):
    """The widget's labels agree with the replies: the visitor's language while the bot answers in it,
    the bot's own once it does not (a new conversation's welcome and a resumed one's alike)."""
    from tests.chat.conftest import in_db

    client = await connect(shop, origin=ORIGIN)
    welcome = await client.hello("v_lang", started=False)
    assert (welcome["languages"], welcome["language"]) == ("follow", "ru")

    shop.language, shop.answers_in_visitor_language = "en", False
    await in_db(lambda: shop.save(update_fields=["language", "answers_in_visitor_language"]))()
    client = await connect(shop, origin=ORIGIN)
    welcome = await client.hello("v_lang", started=False)
    assert (welcome["languages"], welcome["language"]) == ("fixed", "en")
    assert welcome["conversation_id"] is None
    resumed = await (await connect(shop, origin=ORIGIN)).hello("v_lang")
    assert resumed["conversation_id"] is not None
    assert (resumed["languages"], resumed["language"]) == ("fixed", "en")

    shop.answers_in_visitor_language = True
    await in_db(lambda: shop.save(update_fields=["answers_in_visitor_language"]))()
    resumed = await (await connect(shop, origin=ORIGIN)).hello("v_lang")
    assert (resumed["languages"], resumed["language"]) == ("follow", "en")


@pytest.mark.parametrize(
    ("text", "russian", "english"),
    [
        (None, "Чат принимает только текстовые сообщения (JSON).", "The chat accepts text messages (JSON) only."),
        ("{not json", "Не удалось разобрать сообщение: это не JSON.", "Could not read the message: it is not JSON."),
        ("[" * 100_000 + "]" * 100_000, "Не удалось разобрать сообщение: слишком глубокая вложенность.",
         "Could not read the message: it is nested too deeply."),
        ("[1]", "Не удалось разобрать сообщение: ожидался объект JSON.",
         "Could not read the message: a JSON object was expected."),
        ('{"type": "dance"}', "Не удалось разобрать сообщение: неизвестный тип.",
         "Could not read the message: unknown type."),
        ('{"type": "rate", "message_id": 1, "rating": 5}', "Оценка может быть только 1 (полезно) или -1 (не помогло).",
         "A rating can only be 1 (helpful) or -1 (not helpful)."),
        ('{"type": "button", "id": "gone"}', "Эта кнопка больше не работает. Обновите страницу.",
         "This button no longer works. Please reload the page."),
    ],
)
def test_a_bad_frame_is_explained_in_the_bots_language(settings, text, russian, english):
    settings.CHAT_MAX_FRAME_BYTES = 1_000_000  # room for the deeply nested one
    with pytest.raises(BadFrame) as refused:
        frames.parse(text, None)
    assert refused.value.code == "bad_frame" and refused.value.message == russian
    assert frames.error_frame(refused.value, language="ru")["message"] == russian
    assert frames.error_frame(refused.value, language="en") == {"type": "error", "code": "bad_frame",
                                                                "message": english}


def test_the_contact_forms_field_errors_in_both_languages():
    from chat.frames import LeadForm
    from chat.leads import _clean_form

    cases = [
        (LeadForm(name="Анна", phone="", email="", question="", consent=False), "consent",
         "Without your consent to the processing of personal data we cannot keep your contact."),
        (LeadForm(name=" ", phone="+79161234567", email="", question="", consent=True), "name",
         "How should we address you? Please give your name."),
        (LeadForm(name="А" * 201, phone="+79161234567", email="", question="", consent=True), "name",
         "The name is too long: 200 characters at most."),
        (LeadForm(name="Анна", phone="", email="", question="", consent=True), "phone",
         "Please give a phone number or an e-mail so that we can reach you."),
        (LeadForm(name="Анна", phone="12", email="", question="", consent=True), "phone",
         "There is no such phone number. Please check the digits, e.g. +7 916 123-45-67."),
        (LeadForm(name="Анна", phone="", email="anna@", question="", consent=True), "email",
         "Please check the e-mail address: it seems to have a mistake."),
    ]
    for form, field, english in cases:
        with pytest.raises(InvalidField) as refused:
            _clean_form(form)
        frame = frames.error_frame(refused.value, language="en")
        assert frame == {"type": "error", "code": "invalid_field", "field": field, "message": english}
        russian = frames.error_frame(refused.value, language="ru")["message"]
        assert russian == refused.value.message and russian != english and "{" not in russian


@pytest.mark.django_db(transaction=True)
async def test_an_english_bot_explains_a_bad_frame_in_english(shop, connect):
    from tests.chat.conftest import in_db

    shop.language = "en"
    await in_db(lambda: shop.save(update_fields=["language"]))()
    client = await connect(shop, origin=ORIGIN)
    await client.hello()
    await client.send(type="rate", message_id=1, rating=7)
    error = await client.recv()
    assert error == {"type": "error", "code": "bad_frame",
                     "message": "A rating can only be 1 (helpful) or -1 (not helpful)."}
