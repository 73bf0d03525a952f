"""The operator socket end to end on the project's ASGI application, beside a visitor's widget
socket: real database, real Redis channel layer, real sessions."""

import json

import pytest
from django.utils import translation

from chat import services
from chat.models import Conversation, Message
from tests.chat.conftest import DELIVERY_QUESTION, in_db

pytestmark = pytest.mark.django_db(transaction=True)


async def _visitor_waiting(connect, shop, visitor_id="v_op"):
    """A visitor on the widget who pressed «Позвать оператора»; returns their socket and conversation id."""
    visitor = await connect(shop)
    welcome = await visitor.hello(visitor_id)
    await visitor.send(type="button", id="operator")
    assert (await visitor.recv())["message"]["role"] == "system"
    assert await visitor.recv() == {"type": "state", "state": "waiting_operator"}
    return visitor, welcome["conversation_id"]


async def test_a_socket_without_a_session_is_told_to_log_in(connect_operator):
    anonymous = await connect_operator(None)
    assert (await anonymous.recv())["code"] == "login_required"
    assert (await anonymous.ws.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4401}


async def test_errors_come_in_the_operators_language(connect_operator, operator):
    """The switch's cookie, else the browser's Accept-Language, else the installation's Russian."""
    anonymous = await connect_operator(None, accept_language="en-US,en;q=0.9")
    assert (await anonymous.recv())["message"] == "Sign in to answer visitors."
    english = await connect_operator(operator, accept_language="en-US,en;q=0.9")
    await english.hello()
    await english.send(type="open", conversation_id=999_999_999)
    assert (await english.recv())["message"].startswith("Conversation not found.")
    await english.send(type="take", conversation_id="first")  # the chat's own texts per language
    assert (await english.recv())["message"].startswith("The message could not be read")
    await english.send(type="take", conversation_id=0)  # the inbox's, through its catalog
    assert (await english.recv())["message"] == (
        "Could not read the message: the field “conversation_id” must be a conversation's number.")
    await english.send(type="dance")
    assert (await english.recv())["message"] == "Could not read the message: unknown type."
    switched = await connect_operator(operator, accept_language="en-US", language_cookie="ru")
    await switched.hello()
    await switched.send(type="open", conversation_id=999_999_999)
    assert (await switched.recv())["message"].startswith("Разговор не найден.")
    russian = await connect_operator(operator)
    await russian.hello()
    await russian.send(type="open", conversation_id=999_999_999)
    assert (await russian.recv())["message"].startswith("Разговор не найден.")


async def test_another_sites_page_cannot_open_the_inbox(connect_operator, operator):
    foreign = await connect_operator(operator, origin="https://evil.example")
    assert (await foreign.recv())["code"] == "origin_refused"
    assert (await foreign.ws.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}


async def test_a_frame_before_hello_and_a_bad_frame_get_error_frames(connect_operator, operator):
    op = await connect_operator(operator)
    await op.send(type="take", conversation_id=1)
    assert (await op.recv())["code"] == "hello_required"
    await op.hello()
    for raw in ("not json", json.dumps({"type": "open"}), json.dumps({"type": "take", "conversation_id": "7"}),
                json.dumps({"type": "nope"}), "[" * 8000):
        await op.ws.send_to(text_data=raw)
        assert (await op.recv())["code"] == "bad_frame", raw[:20]
    await op.ws.send_to(text_data=json.dumps({"type": "message", "text": "x" * 20_000}))
    assert (await op.recv())["code"] == "too_large"


async def test_a_waiting_visitor_reaches_the_operator_and_they_talk_both_ways(
    shop, connect, connect_operator, operator
):
    op = await connect_operator(operator)
    assert await op.hello() == []
    visitor, conversation_id = await _visitor_waiting(connect, shop)

    waiting = await op.conversation("waiting_operator")  # a new waiting conversation, no reload
    assert waiting["id"] == conversation_id and waiting["waiting_since"]
    assert waiting["bot"] == {"slug": "demo", "name": "Демо-магазин", "sla_minutes": 5}

    await op.send(type="take", conversation_id=conversation_id)
    taken = await op.conversation("operator")
    assert taken["assigned_to"]["name"] == "Анна" and taken["waiting_since"] is None
    joined = await visitor.recv()
    assert joined["message"]["role"] == "system" and joined["message"]["text"] == "Оператор Анна на связи."
    assert await visitor.recv() == {"type": "state", "state": "operator"}

    await op.send(type="typing", conversation_id=conversation_id, on=True)
    assert await visitor.recv() == {"type": "typing", "on": True, "by": "operator"}
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="o1", text="Чем помочь?")
    ack = await op.until("ack")
    assert ack["client_msg_id"] == "o1" and ack["message"]["role"] == "operator" and ack["message"]["author"] == "Анна"
    reply = await visitor.recv()
    assert reply["message"]["text"] == "Чем помочь?" and reply["message"]["role"] == "operator"

    frames = await visitor.ask(DELIVERY_QUESTION, "v1")
    assert [f["type"] for f in frames] == ["ack"]  # the bot stays silent: no typing, no answer
    heard = await op.until("message", conversation_id=conversation_id)
    if heard["message"]["role"] == "operator":  # its own message, heard on the feed too (same id as the ack)
        assert heard["message"]["id"] == ack["message"]["id"]
        heard = await op.until("message", conversation_id=conversation_id)
    assert heard["message"]["text"] == DELIVERY_QUESTION and heard["message"]["role"] == "visitor"


async def test_open_gives_the_transcript_with_the_unanswered_question_marked(shop, knowledge, connect, connect_operator,
                                                                            operator):
    visitor = await connect(shop)
    welcome = await visitor.hello("v_tr")
    frames = await visitor.ask("Есть ли у вас парковка для вертолёта на крыше офиса?", "q1")
    question = frames[0]["message"]["id"]
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="open", conversation_id=welcome["conversation_id"])
    transcript = await op.until("transcript")
    assert [m["role"] for m in transcript["messages"]] == ["visitor", "bot"]
    assert transcript["unanswered"] == [question]
    assert transcript["conversation"]["page_url"] == ""


async def test_release_gives_the_conversation_back_to_the_bot(shop, knowledge, connect, connect_operator, operator):
    op = await connect_operator(operator)
    await op.hello()
    visitor, conversation_id = await _visitor_waiting(connect, shop)
    await op.send(type="take", conversation_id=conversation_id)
    await visitor.recv(), await visitor.recv()  # «на связи», state operator
    await op.send(type="release", conversation_id=conversation_id)
    assert (await visitor.recv())["message"]["role"] == "system"
    assert await visitor.recv() == {"type": "state", "state": "bot"}
    frames = await visitor.ask(DELIVERY_QUESTION, "v2")
    assert any(f["type"] == "message" and "300 ₽" in f["message"]["text"] for f in frames)


async def test_close_ends_it_for_the_visitor(shop, connect, connect_operator, operator):
    op = await connect_operator(operator)
    await op.hello()
    visitor, conversation_id = await _visitor_waiting(connect, shop)
    await op.send(type="close", conversation_id=conversation_id)
    assert "завершил" in (await visitor.recv())["message"]["text"]
    assert await visitor.recv() == {"type": "state", "state": "closed"}
    closed = await op.conversation("closed")
    assert closed["id"] == conversation_id


async def test_a_second_operator_gets_already_taken(shop, connect, connect_operator, operator, django_user_model):
    from tests.inbox.conftest import _member

    boris = await in_db(_member)(django_user_model, shop, "boris@shop.example", "operator")
    first, second = await connect_operator(operator), await connect_operator(boris)
    await first.hello(), await second.hello()
    _visitor, conversation_id = await _visitor_waiting(connect, shop)
    await first.send(type="take", conversation_id=conversation_id)
    await first.conversation("operator")
    await second.send(type="take", conversation_id=conversation_id)
    error = await second.until("error")
    assert error["code"] == "already_taken" and error["holder"] == "Анна"
    assert error["conversation_id"] == conversation_id
    await second.send(type="message", conversation_id=conversation_id, client_msg_id="b1", text="Я возьму")
    assert (await second.until("error"))["code"] == "already_taken"
    assert not await in_db(Message.objects.filter(role="operator").exists)()


async def test_another_bots_operator_hears_nothing_and_gets_not_found(shop, connect, connect_operator, other_operator):
    stranger = await connect_operator(other_operator)
    assert await stranger.hello() == []
    _visitor, conversation_id = await _visitor_waiting(connect, shop)
    assert await stranger.nothing(1.0)  # no frame about another tenant's conversation
    for kind in ("open", "take", "release", "close"):
        await stranger.send(type=kind, conversation_id=conversation_id)
        error = await stranger.recv()
        assert error["code"] == "not_found" and error["conversation_id"] == conversation_id
    await stranger.send(type="message", conversation_id=conversation_id, client_msg_id="s1", text="Здравствуйте")
    assert (await stranger.recv())["code"] == "not_found"
    await stranger.send(type="typing", conversation_id=conversation_id, on=True)
    assert (await stranger.recv())["code"] == "not_found"
    await stranger.send(type="open", conversation_id=999_999_999)
    assert (await stranger.recv())["code"] == "not_found"  # the same answer as for an id that does not exist
    conversation = await in_db(Conversation.objects.get)(pk=conversation_id)
    assert conversation.state == "waiting_operator"


async def test_hello_lists_waiting_first_then_mine_then_recent(shop, connect, connect_operator, operator):
    for visitor_id in ("v_a", "v_b"):
        await _visitor_waiting(connect, shop, visitor_id)
    quiet = await in_db(services.conversation_open)(bot=shop, visitor_id="v_quiet")
    op = await connect_operator(operator)
    queue = await op.hello()
    assert [c["state"] for c in queue] == ["waiting_operator", "waiting_operator", "bot"]
    assert queue[0]["waiting_since"] <= queue[1]["waiting_since"] and queue[2]["id"] == quiet.pk


async def test_an_operator_message_resent_after_a_lost_ack_is_stored_once(shop, connect, connect_operator, operator):
    op = await connect_operator(operator)
    await op.hello()
    _visitor, conversation_id = await _visitor_waiting(connect, shop)
    for _ in range(2):
        await op.send(type="message", conversation_id=conversation_id, client_msg_id="same", text="Добрый день")
        await op.until("ack")
    assert await in_db(Message.objects.filter(role="operator").count)() == 1
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="big", text="я" * 3000)
    assert (await op.until("error"))["code"] == "too_long"
    await op.send(type="message", conversation_id=conversation_id, client_msg_id="blank", text="   ")
    assert (await op.until("error"))["code"] == "empty"


async def test_the_visitor_is_named_in_each_operators_language_never_by_their_id(shop, connect, connect_operator,
                                                                                operator):
    russian = await connect_operator(operator)
    english = await connect_operator(operator, accept_language="en-US,en;q=0.9")
    await russian.hello()
    await english.hello()
    _visitor, conversation_id = await _visitor_waiting(connect, shop, visitor_id="v_5c1f42df")
    conversation = await in_db(Conversation.objects.get)(pk=conversation_id)
    for op, lang in ((russian, "ru"), (english, "en")):
        heard = await op.conversation("waiting_operator")  # the broadcast, labelled per socket
        with translation.override(lang):
            label = conversation.visitor_label
        assert heard["visitor"]["label"] == label
        assert label.startswith("Посетитель, " if lang == "ru" else "Visitor, ") and "v_5c1f42df" not in label
        assert (await op.hello())[0]["visitor"]["label"] == label  # the queue on a reconnect too
