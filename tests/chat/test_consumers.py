"""The widget socket end to end on the project's ASGI application: real database, real Redis
(rate limits, channel layer), real search over embedded entries."""

import asyncio
import json

import pytest

from chat import services
from chat.models import Conversation, Message
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION, in_db

pytestmark = pytest.mark.django_db(transaction=True)


def _types(frames):
    return [f["type"] for f in frames]


def _replies(frames):
    return [f["message"] for f in frames if f["type"] == "message"]


async def test_hello_without_a_conversation_starts_none(shop, connect):
    """Opening the widget leaves no empty «Посетитель» in the inbox: the first message starts it."""
    client = await connect(shop)
    welcome = await client.hello("v_hello", started=False)
    assert welcome == {"type": "welcome", "conversation_id": None, "state": "bot", "messages": [], "lead_form": None,
                       "choice": False, "csat": None, "languages": "follow", "language": "ru"}
    await client.send(type="ping")
    assert await client.recv() == {"type": "pong"}
    assert not await in_db(Conversation.objects.filter(bot=shop).exists)()


async def test_the_first_message_starts_the_conversation_and_the_ack_names_it(knowledge, shop, connect):
    client = await connect(shop)
    await client.hello("v_first", started=False)
    ack, *_rest = await client.ask(DELIVERY_QUESTION, "c1")
    conversation = await in_db(Conversation.objects.get)(bot=shop, visitor_id="v_first")
    assert ack["conversation_id"] == conversation.pk
    again = await connect(shop)
    welcome = await again.hello("v_first")
    assert welcome["conversation_id"] == conversation.pk and len(welcome["messages"]) == 2


async def test_a_refused_first_message_or_contact_starts_nothing(shop, connect):
    client = await connect(shop)
    await client.hello("v_refused", started=False)
    await client.send(type="message", client_msg_id="c1", text="   ")
    assert (await client.recv())["type"] == "error"
    await client.send(type="lead", name="Мария", phone="12", email="", question="", consent=True)
    assert (await client.recv())["type"] == "error"
    await client.send(type="rate", message_id=1, rating=1)
    assert (await client.recv())["code"] == "hello_required"
    assert not await in_db(Conversation.objects.filter(bot=shop).exists)()


async def test_the_operator_button_first_starts_a_waiting_conversation(shop, connect):
    client = await connect(shop)
    await client.hello("v_button", started=False)
    await client.send(type="button", id="operator")
    note = await client.recv()
    assert note["type"] == "message" and note["message"]["role"] == "system"
    assert await client.recv() == {"type": "state", "state": "waiting_operator"}
    conversation = await in_db(Conversation.objects.get)(bot=shop, visitor_id="v_button")
    assert conversation.state == "waiting_operator" and conversation.handed_off_at is not None


async def test_the_operator_button_of_a_bot_without_handoff_starts_nothing(shop, connect):
    shop.handoff_enabled = False
    await in_db(shop.save)(update_fields=["handoff_enabled"])
    client = await connect(shop)
    await client.hello("v_no_handoff", started=False)
    await client.send(type="button", id="operator")
    assert (await client.recv())["type"] == "error"
    assert not await in_db(Conversation.objects.filter(bot=shop).exists)()


async def test_after_a_closed_conversation_hello_starts_none(shop, connect):
    opened = await in_db(services.conversation_open)(bot=shop, visitor_id="v_closed")
    await in_db(services.conversation_close)(conversation=opened, outcome="test")
    client = await connect(shop)
    welcome = await client.hello("v_closed", started=False)
    assert welcome["conversation_id"] is None and welcome["messages"] == []


async def test_a_question_is_answered_from_an_entry_with_its_link(knowledge, shop, connect):
    client = await connect(shop)
    await client.hello()
    frames = await client.ask(DELIVERY_QUESTION, "c1")
    assert _types(frames) == ["ack", "typing", "message", "typing"]
    ack, typing_on, reply, typing_off = frames
    assert ack["client_msg_id"] == "c1" and ack["message"]["role"] == "visitor"
    assert ack["message"]["text"] == DELIVERY_QUESTION
    assert typing_on == {"type": "typing", "on": True} and typing_off == {"type": "typing", "on": False}
    message = reply["message"]
    assert set(message) == {
        "id", "role", "text", "links", "buttons", "cards", "rating", "created_at", "client_msg_id", "author",
    }
    assert message["role"] == "bot" and "300 ₽" in message["text"]
    assert message["links"] == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert message["buttons"] == [] and message["rating"] == 0


async def test_no_answer_offers_the_operator_button_and_the_button_hands_off(knowledge, shop, connect, owner_on_hand):
    client = await connect(shop)
    await client.hello()
    [reply] = _replies(await client.ask(UNKNOWN_QUESTION, "c1"))
    assert reply["text"].startswith("К сожалению, точного ответа у меня нет.")
    assert reply["buttons"] == [{"id": "operator", "label": "Позвать оператора"}]

    await client.send(type="button", id="operator")
    note = await client.recv()
    assert note["type"] == "message" and note["message"]["role"] == "system"
    assert note["message"]["text"].startswith("Оператор подключится")
    assert await client.recv() == {"type": "state", "state": "waiting_operator"}


async def test_whoami_and_greeting_are_answered_by_rules(shop, connect):
    client = await connect(shop)
    await client.hello()
    [whoami] = _replies(await client.ask("Ты бот?", "c1"))
    assert "Демо-магазин" in whoami["text"] and whoami["links"] == []
    [greeting] = _replies(await client.ask("Добрый день!", "c2"))
    assert greeting["text"] == "Здравствуйте! Чем могу помочь?"


async def test_asking_for_a_person_hands_off_and_silences_the_bot(shop, connect):
    client = await connect(shop)
    await client.hello()
    frames = await client.ask("Позовите, пожалуйста, живого оператора", "c1")
    assert _types(frames) == ["ack", "typing", "message", "message", "typing", "state"]
    bot_reply, note = _replies(frames)
    assert bot_reply["role"] == "bot" and note["role"] == "system"
    assert frames[-1] == {"type": "state", "state": "waiting_operator"}

    frames = await client.ask("Я подожду", "c2")
    assert _types(frames) == ["ack"]
    assert await in_db(Message.objects.filter(role="bot").count)() == 1


async def test_a_resent_message_gets_the_same_ack_and_reply_and_no_new_rows(shop, connect):
    client = await connect(shop)
    await client.hello()
    first = await client.ask("Привет", "c1")
    again = await client.ask("Привет", "c1")
    assert first[0] == again[0]
    assert _replies(first) == _replies(again)
    assert await in_db(Message.objects.count)() == 2


async def test_a_reconnecting_widget_gets_what_it_missed(shop, connect):
    client = await connect(shop)
    await client.hello("v_resume")
    ack, *_rest = await client.ask("Привет", "c1")
    await client.close()
    # While the widget was away an operator joined and wrote (the inbox will do this).
    conversation = await in_db(Conversation.objects.get)(visitor_id="v_resume")
    await in_db(services.conversation_handoff)(conversation=conversation, reason="test")

    again = await connect(shop)
    welcome = await again.hello("v_resume", last_seen_id=ack["message"]["id"])
    assert [m["role"] for m in welcome["messages"]] == ["bot", "system"]
    assert welcome["state"] == "waiting_operator"
    everything = await (await connect(shop)).hello("v_resume")
    assert [m["role"] for m in everything["messages"]] == ["visitor", "bot", "system"]


async def test_a_visitor_back_before_the_answer_was_made_gets_it_after_welcome(knowledge, shop, connect):
    """The question was stored but its answer never made (the server died mid-answer): the next
    hello answers it, and a resend of it on that socket then gets its ack alone."""
    conversation = await in_db(services.conversation_open)(bot=shop, visitor_id="v_owed")
    visitor, _created = await in_db(services.message_accept)(
        conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="c1"
    )
    client = await connect(shop)
    welcome = await client.hello("v_owed", last_seen_id=visitor.pk)
    assert welcome["messages"] == []
    frames = [await client.recv() for _ in range(3)]
    assert _types(frames) == ["typing", "message", "typing"]
    assert frames[1]["message"]["role"] == "bot" and frames[1]["message"]["links"][0]["title"] == "Доставка"

    again = await client.ask(DELIVERY_QUESTION, "c1")
    assert _types(again) == ["ack"] and again[0]["message"]["id"] == visitor.pk
    assert await in_db(Message.objects.filter(reply_to=visitor).count)() == 1
    later = await connect(shop)
    assert [m["role"] for m in (await later.hello("v_owed"))["messages"]] == ["visitor", "bot"]
    assert await later.ws.receive_nothing(timeout=0.5)  # nothing more is owed


async def test_operator_events_reach_the_visitors_socket(shop, connect):
    from channels.layers import get_channel_layer

    from chat.consumers import conversation_group

    client = await connect(shop)
    welcome = await client.hello()
    layer = get_channel_layer()
    message = {"id": 999, "role": "operator", "text": "Здравствуйте, я Анна.", "links": [], "buttons": [],
               "rating": 0, "created_at": "2026-01-01T00:00:00+00:00", "client_msg_id": ""}
    await layer.group_send(conversation_group(welcome["conversation_id"]), {"type": "chat.message", "message": message})
    assert await client.recv() == {"type": "message", "message": message}


@pytest.mark.parametrize(
    ("origin", "reason"),
    [("https://evil.example", "foreign"), ("http://shop.example", "other scheme"), (None, "missing")],
)
async def test_a_socket_from_another_origin_is_refused(shop, connect, origin, reason, caplog):
    client = await connect(shop, origin=origin)
    error = await client.recv()
    assert error["type"] == "error" and error["code"] == "origin_refused"
    assert await client.ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    assert "is not allowed" in caplog.text


async def test_an_unknown_widget_key_is_refused(shop, connect):
    client = await connect(shop, key="no-such-key")
    error = await client.recv()
    assert error["code"] == "unknown_bot" and "ключ виджета" in error["message"]
    assert await client.ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4404}


async def test_a_flood_is_rate_limited_with_a_retry_time(shop, connect, settings):
    settings.CHAT_RATE_VISITOR = 2
    client = await connect(shop)
    await client.hello("v_flood")
    assert _types(await client.ask("Привет", "c1"))[0] == "ack"
    assert _types(await client.ask("Спасибо", "c2"))[0] == "ack"
    [error] = await client.ask("Ещё раз привет", "c3")
    assert error["code"] == "rate_limited" and error["client_msg_id"] == "c3"
    assert 1 <= error["retry_after"] <= 3600 and "Подождите" in error["message"]
    # A resend of a stored message is not a new message: it still gets its answer.
    assert _types(await client.ask("Спасибо", "c2"))[0] == "ack"
    assert await in_db(Message.objects.filter(role="visitor").count)() == 2


async def test_the_address_limit_counts_every_visitor_behind_it(shop, connect, settings):
    settings.CHAT_RATE_IP = 1
    first = await connect(shop, client_ip="203.0.113.77")
    await first.hello("v_a")
    assert _types(await first.ask("Привет", "c1"))[0] == "ack"
    second = await connect(shop, client_ip="203.0.113.77")
    await second.hello("v_b")
    [error] = await second.ask("Привет", "c1")
    assert error["code"] == "rate_limited"


async def test_bad_frames_get_readable_errors_and_the_socket_stays_open(shop, connect, settings):
    client = await connect(shop)
    await client.ws.send_to(text_data=json.dumps({"type": "message", "client_msg_id": "c0", "text": "Привет"}))
    assert (await client.recv())["code"] == "hello_required"
    await client.hello()

    await client.ws.send_to(bytes_data=b"\x00\x01")
    assert (await client.recv())["code"] == "bad_frame"
    await client.ws.send_to(text_data="{not json")
    error = await client.recv()
    assert error["code"] == "bad_frame" and "JSON" in error["message"]
    broken = [{"type": "launch"}, [1, 2], {"type": "message", "text": "без id"}, {"type": "rate", "message_id": "x"}]
    for frame in broken:
        await client.ws.send_to(text_data=json.dumps(frame))
        error = await client.recv()
        assert error["code"] == "bad_frame" and error["message"].startswith(("Не удалось", "Оценка"))
    await client.ws.send_to(text_data=json.dumps({"type": "message", "client_msg_id": "c1", "text": "я" * 9000}))
    assert (await client.recv())["code"] == "too_large"

    await client.send(type="ping")
    assert await client.recv() == {"type": "pong"}


@pytest.mark.parametrize(("text", "code"), [("   ", "empty"), ("а" * 2001, "too_long")])
async def test_unacceptable_text_is_refused(shop, connect, text, code):
    client = await connect(shop)
    await client.hello()
    [error] = await client.ask(text, "c1")
    assert error["code"] == code and error["client_msg_id"] == "c1"
    assert await in_db(Message.objects.count)() == 0


async def test_a_closed_conversation_says_so_and_hello_starts_a_new_one(shop, connect):
    client = await connect(shop)
    welcome = await client.hello("v_closed")
    conversation = await in_db(Conversation.objects.get)(pk=welcome["conversation_id"])
    await in_db(services.conversation_close)(conversation=conversation, outcome="resolved")
    assert await client.recv() == {"type": "state", "state": "closed"}  # the widget hears of it at once
    [error] = await client.ask("Ещё вопрос", "c1")
    assert error["code"] == "closed" and "завершён" in error["message"]
    fresh = await client.hello("v_closed", started=False)  # the next message starts the new one
    assert fresh["conversation_id"] is None and fresh["messages"] == []


async def test_rating_a_reply_and_not_someone_elses(shop, other_bot, connect):
    client = await connect(shop)
    await client.hello()
    [reply] = _replies(await client.ask("Привет", "c1"))
    await client.send(type="rate", message_id=reply["id"], rating=-1)
    assert await client.recv() == {"type": "rated", "message_id": reply["id"], "rating": -1}
    stored = await in_db(Message.objects.get)(pk=reply["id"])
    assert stored.flag("friction")
    offer = await client.recv()  # escalation rule: a thumbs-down offers a person, once
    assert offer["message"]["role"] == "system" and offer["message"]["buttons"][0]["id"] == "operator"

    foreign = await in_db(services.conversation_open)(bot=other_bot, visitor_id="v_test")
    _v, foreign_reply, _ = await in_db(services.message_receive)(conversation=foreign, text="Привет", client_msg_id="x")
    await client.send(type="rate", message_id=foreign_reply.pk, rating=1)
    assert (await client.recv())["code"] == "not_found"


async def test_an_unexpected_failure_is_a_readable_error_not_a_dropped_socket(shop, connect, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("database is on fire")

    monkeypatch.setattr(services, "message_rate", broken)  # the one way to make a service fail unexpectedly
    client = await connect(shop)
    await client.hello()
    await client.send(type="rate", message_id=1, rating=1)
    error = await client.recv()
    assert error["code"] == "server_error" and "на нашей стороне" in error["message"]
    assert "database is on fire" in caplog.text
    await client.send(type="ping")
    assert await client.recv() == {"type": "pong"}


async def test_streamed_text_arrives_as_deltas_before_the_final_message(shop, connect, monkeypatch):
    real = services.pipeline.answer

    def streaming(**kwargs):  # stands in for the model-backed chain, which streams its answer
        kwargs["on_delta"]("Здравствуйте")
        kwargs["on_delta"]("Здравствуйте! Чем")
        return real(**kwargs)

    monkeypatch.setattr(services.pipeline, "answer", streaming)
    client = await connect(shop)
    await client.hello()
    frames = await client.ask("Сколько стоит доставка?", "c1")  # the rules alone never stream
    assert _types(frames) == ["ack", "typing", "delta", "delta", "message", "typing"]
    assert frames[2] == {"type": "delta", "client_msg_id": "c1", "text": "Здравствуйте"}
    assert frames[3]["text"] == "Здравствуйте! Чем"


async def test_a_server_cancelling_a_socket_task_sees_it_end_cancelled():
    """A server shutting down cancels each socket's task; the consumer's own clean-up (ending its
    channel-layer task) must not swallow that cancel and return as if the socket had closed."""
    from channels.exceptions import StopConsumer

    from chat.consumers import ChatConsumer

    sent: list[dict] = []
    socket_task: asyncio.Task | None = None

    async def receive() -> dict:
        assert socket_task is not None
        socket_task.cancel()  # arrives at the clean-up's first wait
        raise StopConsumer

    async def send(message: dict) -> None:
        sent.append(message)

    socket_task = asyncio.create_task(ChatConsumer()({"type": "websocket", "path": "/ws/chat/x/"}, receive, send))
    with pytest.raises(asyncio.CancelledError):
        await socket_task
    assert socket_task.cancelled() and sent == []
