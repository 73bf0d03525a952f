"""An open widget follows the owner's changes: voice, thresholds and handoff changed through their
services (the voice page, the admin's save) while a visitor's socket is open reach that socket's
next turn, without a reload of the page (bots/freshness.py)."""

from __future__ import annotations

import pytest

from bots.models import Bot
from tests.chat.conftest import DELIVERY_QUESTION, in_db
from voice import services as voice_services

pytestmark = pytest.mark.django_db(transaction=True)

SLIDERS = dict.fromkeys(("formality", "empathy", "brevity", "assertiveness"), "3")


def _replies(frames):
    return [f["message"] for f in frames if f["type"] == "message"]


def _voice(bot_id: int, greeting: str) -> None:
    bot = Bot.objects.get(pk=bot_id)
    voice_services.voice_save(bot=bot, revision=voice_services.revision_of(bot), data={
        "sliders": SLIDERS, "conditions": "", "preferred": [], "forbidden": [],
        "replies": {"ru": {"greeting": greeting}},
    })


def _set(bot_id: int, **fields) -> None:
    """What the admin's change form does: the row saved with the fields changed."""
    bot = Bot.objects.get(pk=bot_id)
    for name, value in fields.items():
        setattr(bot, name, value)
    bot.save(update_fields=list(fields))


async def test_a_voice_change_reaches_the_open_socket_at_its_next_turn(shop, connect):
    client = await connect(shop)
    await client.hello("v_voice")
    [before] = _replies(await client.ask("Здравствуйте", "c1"))
    assert before["text"] == "Здравствуйте! Чем могу помочь?"

    await in_db(_voice)(shop.pk, "Добрый день! Рады вам в нашем магазине.")
    [after] = _replies(await client.ask("Добрый вечер!", "c2"))
    assert after["text"] == "Добрый день! Рады вам в нашем магазине."

    await in_db(_voice)(shop.pk, "Привет! Спрашивайте.")  # and again: each change, not only the first
    [again] = _replies(await client.ask("Здравствуйте!", "c3"))
    assert again["text"] == "Привет! Спрашивайте."


async def test_a_threshold_change_reaches_the_open_socket_at_its_next_turn(knowledge, shop, connect):
    client = await connect(shop)
    await client.hello("v_threshold")
    [answered] = _replies(await client.ask(DELIVERY_QUESTION, "c1"))
    assert "300 ₽" in answered["text"]

    await in_db(_set)(shop.pk, match_threshold=0.999)  # nothing is that close now
    [refused] = _replies(await client.ask("Как можно оплатить заказ?", "c2"))
    assert refused["text"].startswith("К сожалению, точного ответа у меня нет.")
    assert refused["links"] == []


async def test_turning_handoff_off_reaches_the_open_socket(knowledge, shop, connect):
    client = await connect(shop)
    await client.hello("v_handoff")
    await client.ask("Здравствуйте", "c1")

    await in_db(_set)(shop.pk, handoff_enabled=False)
    await client.send(type="button", id="operator")
    error = await client.recv()
    assert error["type"] == "error" and error["code"] == "handoff_unavailable"
    assert error["message"].startswith("Оператора в этом чате сейчас нет.")


def _turn_statements(conversation, text: str, client_msg_id: str) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chat import services

    with CaptureQueriesContext(connection) as queries:
        services.message_take(conversation=conversation, text=text, client_msg_id=client_msg_id)
    return [q["sql"] for q in queries.captured_queries]


def test_a_turn_reads_the_bot_row_again_only_after_a_change(shop):
    """The check per turn is one Redis read: the rules turn keeps its statements (pinned in
    test_services) while nothing changed, and costs one SELECT of the bot right after a change."""
    from chat import services

    conversation = services.conversation_open(bot=shop, visitor_id="v_same")
    services.message_take(conversation=conversation, text="Привет", client_msg_id="c0")
    steady = _turn_statements(conversation, "Спасибо", "c1")
    assert not any('FROM "bots_bot"' in sql for sql in steady)

    _set(shop.pk, match_threshold=0.5)
    changed = _turn_statements(conversation, "Благодарю", "c2")
    assert len(changed) == len(steady) + 1
    assert 'FROM "bots_bot"' in changed[0] and conversation.bot.match_threshold == 0.5
    assert len(_turn_statements(conversation, "Спасибо!", "c3")) == len(steady)


def test_a_copy_read_while_redis_was_away_reloads_once_it_is_back(shop):
    from bots import freshness

    copy = Bot.objects.get(pk=shop.pk)
    freshness.bot_mark(copy, freshness._UNKNOWN)
    Bot.objects.filter(pk=shop.pk).update(name="Новое имя")  # a change no token announced
    freshness.bot_fresh(copy)
    assert copy.name == "Новое имя"


def test_a_change_between_a_sockets_connect_and_its_hello_reaches_the_conversation(shop):
    """The socket reads the bot at connect; the owner saves a change before the visitor's hello; the
    new conversation works with the changed row, and its first turn does not read the row again."""
    from chat import services

    at_connect = Bot.objects.get(pk=shop.pk)  # what the consumer holds between connect and hello
    _set(shop.pk, match_threshold=0.5)  # committed, its token published
    conversation = services.conversation_open(bot=at_connect, visitor_id="v_between")
    assert conversation.bot.match_threshold == 0.5
    services.message_take(conversation=conversation, text="Привет", client_msg_id="c0")
    assert not any('FROM "bots_bot"' in sql for sql in _turn_statements(conversation, "Спасибо", "c1"))


def test_a_copy_adopted_with_the_token_it_already_carries_is_not_read_again(shop, django_assert_num_queries):
    from bots import freshness

    token = freshness.bot_remember(bot_id=shop.pk)
    copy = freshness.bot_mark(Bot.objects.get(pk=shop.pk), token)
    with django_assert_num_queries(0):
        freshness.bot_adopt(copy, token)
