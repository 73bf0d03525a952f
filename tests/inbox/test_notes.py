"""Operators' notes: the other operators of the bot see a note in the inbox at once and in the
transcript; the visitor never does — no frame on their real socket, not in what a reconnecting
widget restores, not in the API's conversation; an empty note is refused in words."""

import json

import pytest

from inbox import notes
from inbox.models import Note
from tests.api.conftest import api, api_key, client_for  # noqa: F401  (the API's fixtures)
from tests.chat.conftest import in_db

NOTE = "Клиент раньше жаловался на курьера — проверить номер заказа"


async def _operator_and_visitor(connect, connect_operator, shop, user, visitor_id):
    visitor = await connect(shop)
    welcome = await visitor.hello(visitor_id)
    op = await connect_operator(user)
    await op.hello()
    await op.send(type="open", conversation_id=welcome["conversation_id"])
    await op.until("transcript")
    return visitor, op, welcome["conversation_id"]


@pytest.mark.django_db(transaction=True)
async def test_a_note_reaches_the_other_operator_and_never_the_visitor(
    shop, connect, connect_operator, operator, second_operator
):
    visitor, anna, conversation_id = await _operator_and_visitor(connect, connect_operator, shop, operator, "v_n1")
    boris = await connect_operator(second_operator)
    await boris.hello()
    await boris.send(type="open", conversation_id=conversation_id)
    await boris.until("transcript")

    await anna.send(type="note", conversation_id=conversation_id, text=NOTE)
    mine = await anna.until("note")
    assert mine["note"]["text"] == NOTE and mine["note"]["author"] == "Анна"
    heard = await boris.until("note", conversation_id=conversation_id)
    assert heard["note"]["id"] == mine["note"]["id"]
    assert await visitor.ws.receive_nothing(timeout=1.0)  # not a frame of any kind reached the widget

    await anna.send(type="message", conversation_id=conversation_id, client_msg_id="after", text="Сейчас проверю")
    await anna.until("ack")
    seen = [await visitor.recv() for _ in range(3)]  # «на связи», the state, the message: no note among them
    assert NOTE not in json.dumps(seen, ensure_ascii=False)
    restored = await (await connect(shop)).hello("v_n1")  # a reconnecting widget restores the transcript
    assert NOTE not in json.dumps(restored, ensure_ascii=False) and restored["messages"]

    await boris.send(type="open", conversation_id=conversation_id)
    transcript = await boris.until("transcript")
    assert [n["text"] for n in transcript["notes"]] == [NOTE]
    assert NOTE not in json.dumps(transcript["messages"], ensure_ascii=False)


@pytest.mark.django_db(transaction=True)
async def test_an_empty_note_is_refused_in_words(shop, connect, connect_operator, operator):
    _visitor, op, conversation_id = await _operator_and_visitor(connect, connect_operator, shop, operator, "v_n2")
    await op.send(type="note", conversation_id=conversation_id, text="  \n ")
    error = await op.until("error")
    assert error["code"] == "empty" and error["message"]
    assert not await in_db(Note.objects.exists)()


@pytest.mark.django_db(transaction=True)
async def test_a_note_on_another_bots_conversation_is_not_found(
    shop, other_bot, connect, connect_operator, other_operator
):
    visitor = await connect(shop)
    welcome = await visitor.hello("v_n3")
    olga = await connect_operator(other_operator)
    await olga.hello()
    await olga.send(type="note", conversation_id=welcome["conversation_id"], text=NOTE)
    assert (await olga.until("error"))["code"] == "not_found"
    assert not await in_db(Note.objects.exists)()


@pytest.mark.django_db
def test_the_page_shows_the_note_styled_and_the_api_never_gives_it(client, shop, operator, api):  # noqa: F811
    from chat import services

    conversation = services.conversation_open(bot=shop, visitor_id="v_n4")
    services.message_receive(conversation=conversation, text="Где мой заказ?", client_msg_id="n4-1")
    notes.note_add(conversation=conversation, author=operator, text='<b>Важно</b>: VIP')
    client.force_login(operator)
    page = client.get(f"/inbox/c/{conversation.pk}/").content.decode()
    assert 'class="msg note"' in page and "Заметка" in page and "&lt;b&gt;Важно&lt;/b&gt;: VIP" in page
    body = api.get(f"/api/v1/conversations/{conversation.pk}/").content.decode()
    assert "Где мой заказ?" in body and "VIP" not in body
