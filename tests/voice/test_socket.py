"""The voice on the real widget socket (the project's ASGI application, real database and Redis,
the fake Messages API streaming): every delta and the final message are worded by the dictionary,
and no frame ever carries a forbidden sentence.

Cross-cutting: the voice (voice/services.py) on the widget socket (chat/consumers.py) with a streaming model."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from bots.models import Bot
from tests.chat.conftest import DELIVERY_QUESTION, connect  # noqa: F401  (fixture)
from tests.fakes.messages_api import tool_use
from voice import services as voice_services

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def _tune(bot: Bot) -> Bot:
    voice_services.voice_save(bot=bot, revision=0, data={
        "sliders": dict.fromkeys(("formality", "empathy", "brevity", "assertiveness"), "3"), "conditions": "",
        "preferred": [("доставка", "курьерская доставка")], "forbidden": ["дешёв*"],
        "replies": {"ru": {"greeting": "Добрый день! Доставка — наша гордость."}},
    })
    return Bot.objects.get(pk=bot.pk)


async def test_deltas_and_the_final_message_are_worded_and_never_show_a_forbidden_sentence(
    knowledge, shop, connect, fake_llm  # noqa: F811
):
    bot = await _tune(shop)
    answer = "Доставка по Москве — на следующий день, стоимость 300 ₽. Это дешевле, чем у всех. Оплата при получении."
    fake_llm.script(tool_use({"intent": "question", "source": 0, "answer": answer, "product_query": "", "fixed": ""},
                             chunk_chars=3))
    client = await connect(bot)
    await client.hello("v_socket")
    greeting = await client.ask("Здравствуйте", "c0")
    assert [f["message"]["text"] for f in greeting if f["type"] == "message"] == [
        "Добрый день! Курьерская доставка — наша гордость."]
    frames = await client.ask(DELIVERY_QUESTION, "c1")
    deltas = [f["text"] for f in frames if f["type"] == "delta"]
    final = next(f["message"] for f in frames if f["type"] == "message")
    assert deltas and all(d.startswith("Курьерская доставка по Москве") for d in deltas)
    assert final["text"] == "Курьерская доставка по Москве — на следующий день, стоимость 300 ₽. Оплата при получении."
    assert "дешев" not in json.dumps(frames, ensure_ascii=False)
    assert final["links"] == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
