"""The voice in the answer chain: sliders and «условия» in the system prompt the model gets, the
dictionary on every text the visitor reads (final reply, streamed drafts, canned texts), forbidden
sentences dropped and journaled, owner canned replies, and a visitor's experiment arm.

Cross-cutting: the voice (voice/effective.py, voice/services.py) through the answer chain
(answers/pipeline.py, answers/replies.py, chat/services.py)."""

from __future__ import annotations

import pytest

from answers import pipeline
from bots.models import Bot
from chat import services
from llm.models import RunEvent
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION
from tests.fakes.messages_api import tool_use
from voice import effective
from voice import services as voice_services

pytestmark = pytest.mark.django_db

VOICE = {
    "sliders": {"formality": "5", "empathy": "3", "brevity": "5", "assertiveness": "3"},
    "conditions": "Всегда предлагайте самовывоз.",
    "preferred": [("доставка", "курьерская доставка")],
    "forbidden": ["дешёв*"],
    "replies": {"ru": {"greeting": "Добрый день! Доставка — за один день.", "no_answer": "Этого я пока не знаю."},
                "en": {"greeting": "Good day! Ask me anything."}},
}
SOURCED = "Доставка по Москве — на следующий день, стоимость 300 ₽. Это дешевле, чем у всех."


def _answer(text: str, source: int = 0) -> dict:
    return {"intent": "question", "source": source, "answer": text, "product_query": "", "fixed": ""}


def _tuned(bot: Bot, **changes) -> Bot:
    voice_services.voice_save(bot=bot, data={**VOICE, **changes}, revision=voice_services.revision_of(bot))
    return Bot.objects.get(pk=bot.pk)


def _system(fake_llm) -> list[str]:
    return [block["text"] for block in fake_llm.requests[-1].body["system"]]


def test_a_bot_nobody_tuned_sends_the_rules_alone(knowledge, shop, fake_llm):
    fake_llm.script(tool_use(_answer("По Москве — 300 ₽.")))
    pipeline.answer(bot=shop, text=DELIVERY_QUESTION, history=[])
    assert len(_system(fake_llm)) == 1


def test_the_sliders_and_conditions_follow_the_rules_in_the_system_prompt(knowledge, shop, fake_llm):
    bot = _tuned(shop)
    fake_llm.script(tool_use(_answer("По Москве — 300 ₽.")))
    pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[])
    rules, voice = _system(fake_llm)
    assert rules.startswith("Вы — виртуальный помощник")
    assert voice == ("Тон ответов\n- Держитесь строго официального тона: на «вы», с вежливыми формулами, без шуток "
                     "и восклицаний.\n- Отвечайте предельно коротко: одно предложение, только главное.\n\n"
                     "Условия владельца сайта (дополнительные правила; правила выше важнее):\n"
                     "Всегда предлагайте самовывоз.")
    assert fake_llm.requests[-1].body["system"][-1].get("cache_control") == {"type": "ephemeral"}  # still cached


def test_a_sourced_answer_is_worded_and_its_forbidden_sentence_never_shows_even_streamed(knowledge, shop, fake_llm):
    bot = _tuned(shop)
    fake_llm.script(tool_use(_answer(SOURCED), chunk_chars=3))
    deltas: list[str] = []
    reply = pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[], on_delta=deltas.append, conversation_id=77)
    assert reply.text == "Курьерская доставка по Москве — на следующий день, стоимость 300 ₽."
    assert reply.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]  # the entry's, untouched
    assert deltas and all("дешев" not in d and not d.startswith("Доставка") for d in deltas)
    assert reply.text.startswith(deltas[-1])
    event = RunEvent.objects.get(bot=bot, purpose="voice.forbidden")
    assert (event.kind, event.ok, event.conversation_id) == (RunEvent.Kind.FILTER_BLOCK, True, 77)
    assert event.detail == {"terms": ["дешёв*"], "sentences": 1, "fallback": False, "route": "sourced"}


def test_an_answer_left_empty_falls_back_to_no_answer_with_the_way_to_a_person(knowledge, shop, fake_llm):
    bot = _tuned(shop)
    fake_llm.script(tool_use(_answer("Дешевле доставки не найти.")))
    reply = pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[])
    assert reply.text == "Этого я пока не знаю. Пригласить оператора? Он во всём разберётся."
    assert reply.buttons == [{"id": "operator", "label": "Позвать оператора"}]
    assert reply.links == [] and reply.source_entry_id is None and reply.flags["unanswered"]
    assert RunEvent.objects.get(bot=bot, purpose="voice.forbidden").detail["fallback"] is True


def test_without_a_model_the_entry_excerpt_is_worded_too(knowledge, shop):
    bot = _tuned(shop)
    reply = pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[])
    assert reply.llm_meta["route"] == "retrieval"
    assert reply.text.startswith("Курьерская доставка по Москве") and "Доставка" not in reply.text
    assert reply.links[0]["url"] == "https://shop.example/delivery"


def test_owner_canned_replies_win_per_language_and_defaults_stay_when_empty(shop):
    bot = _tuned(shop)
    greeting = pipeline.answer(bot=bot, text="Здравствуйте", history=[]).text
    assert greeting == "Добрый день! Курьерская доставка — за один день."
    assert pipeline.answer(bot=bot, text="Hello", history=[]).text == "Good day! Ask me anything."
    thanks = pipeline.answer(bot=bot, text="Спасибо!", history=[]).text
    assert thanks == "Пожалуйста! Если появятся ещё вопросы — пишите."
    assert pipeline.answer(bot=bot, text="Соедините с оператором", history=[]).text == "Сейчас позову оператора."


def test_the_unknown_question_gets_the_owners_no_answer_text(knowledge, shop):
    bot = _tuned(shop)
    reply = pipeline.answer(bot=bot, text=UNKNOWN_QUESTION, history=[])
    assert reply.text == "Этого я пока не знаю. Пригласить оператора? Он во всём разберётся."


def test_a_stored_turn_through_the_services_is_worded_and_the_rules_turn_costs_no_more_queries(
    knowledge, shop, django_assert_num_queries
):
    bot = _tuned(shop)
    conversation = services.conversation_open(bot=bot, visitor_id="v_voice")
    services.message_receive(conversation=conversation, text="Привет", client_msg_id="c0")
    with django_assert_num_queries(6):  # as without a voice: the voice comes with the bot row
        _v, greeting, _ = services.message_receive(conversation=conversation, text="Здравствуйте", client_msg_id="c1")
    assert greeting is not None and greeting.text == "Добрый день! Курьерская доставка — за один день."
    _v, reply, _ = services.message_receive(conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="c2")
    assert reply is not None and reply.text.startswith("Курьерская доставка по Москве")


def test_the_visitors_arm_decides_the_prompt_and_is_recorded_on_the_conversation(knowledge, shop, fake_llm):
    bot = _tuned(shop)
    voice_services.experiment_attach(bot=bot, experiment_id=5, share=50,
                                     variant={"sliders": {**dict(effective.base_of(bot.voice).sliders), "brevity": 1}})
    bot = Bot.objects.get(pk=bot.pk)
    arms = {effective.arm_of(5, 50, f"v{n}"): f"v{n}" for n in range(50)}
    for arm, visitor in sorted(arms.items()):
        conversation = services.conversation_open(bot=bot, visitor_id=visitor)
        assert conversation.variant == f"5:{arm}"
        fake_llm.script(tool_use(_answer("По Москве — 300 ₽.")))
        _v, reply, _ = services.message_receive(conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="c1")
        voice = _system(fake_llm)[1]
        assert ("Отвечайте развёрнуто" in voice) == (arm == "b")
        assert ("Отвечайте предельно коротко" in voice) == (arm == "a")
        assert reply is not None and reply.llm_meta["variant"] == f"5:{arm}"


def test_a_threshold_variant_changes_what_retrieval_may_show(knowledge, shop):
    voice_services.experiment_attach(bot=shop, experiment_id=9, share=50, variant={"match_threshold": 0.99})
    bot = Bot.objects.get(pk=shop.pk)
    arms = {effective.arm_of(9, 50, f"v{n}"): f"v{n}" for n in range(50)}
    routes = {}
    for arm, visitor in arms.items():
        reply = pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[],
                                caller=pipeline.orders.Caller(visitor_id=visitor))
        routes[arm] = reply.llm_meta["route"]
    assert routes == {"a": "retrieval", "b": "no_answer"}
    assert Bot.objects.get(pk=shop.pk).match_threshold == shop.match_threshold  # the copy was never saved


def test_the_owners_out_of_hours_text_covers_both_moments_and_fills_in_the_hours(shop):
    from answers import replies

    bot = _tuned(shop, replies={"ru": {"out_of_hours": "Мы отдыхаем{hours}. Напишите утром."}})
    assert replies.out_of_hours(bot, "пн–пт 9:00–18:00", language="ru") == (
        "Мы отдыхаем (часы работы: пн–пт 9:00–18:00). Напишите утром.")
    bot.privacy_policy_url = "https://shop.example/privacy"  # the other moment: with a contact form
    assert replies.out_of_hours(bot, "", language="ru") == "Мы отдыхаем. Напишите утром."
    assert replies.out_of_hours(bot, "", language="en").startswith("Our operators are not working right now")


def test_saving_the_voice_keeps_a_running_experiment(shop):
    voice_services.experiment_attach(bot=shop, experiment_id=3, share=30, variant={"conditions": "Б."})
    bot = _tuned(Bot.objects.get(pk=shop.pk))
    assert bot.voice["experiment"] == {"id": 3, "share": 30, "b": {"conditions": "Б."}}
    assert bot.voice["conditions"] == "Всегда предлагайте самовывоз."
