"""The bot's return: after an operator presses «Вернуть боту», the bot answers the question the
visitor asked while waiting that nobody answered, through the normal chain (its source and link),
on the visitor's open widget, by a real Celery worker; and only that question, once."""

from __future__ import annotations

import asyncio

import pytest

from chat import handoff, selectors, services
from chat.models import Conversation, Message
from chat.returns import answer_returned
from tests.chat.conftest import DELIVERY_QUESTION, in_db

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def operator(django_user_model, shop):
    from bots.models import Membership

    user = django_user_model.objects.create_user(username="anna@shop.example", email="anna@shop.example",
                                                 password="pw-member-123", first_name="Анна")
    Membership.objects.create(bot=shop, user=user, role="operator")
    return user


async def _waiting_with_question(client, visitor, question):
    welcome = await client.hello(visitor)
    await client.send(type="button", id="operator")
    while (await client.recv()) != {"type": "state", "state": "waiting_operator"}:
        pass
    frames = await client.ask(question, f"{visitor}-q")
    assert [f["type"] for f in frames] == ["ack"]  # the bot is silent while a person is awaited
    return welcome["conversation_id"]


async def _frames_until_bot_message(client):
    seen: list[dict] = []
    while not any(f["type"] == "message" and f["message"]["role"] == "bot" for f in seen):
        seen.append(await client.recv(timeout=60))
    return seen


async def test_the_bot_answers_the_question_left_while_waiting(knowledge, shop, connect, operator,
                                                               celery_worker_thread):
    client = await connect(shop)
    conversation_id = await _waiting_with_question(client, "v_back", DELIVERY_QUESTION)
    await in_db(handoff.conversation_take)(conversation_id=conversation_id, operator=operator)
    await in_db(handoff.conversation_release)(conversation_id=conversation_id, operator=operator)
    seen = await _frames_until_bot_message(client)
    notes = [f["message"]["text"] for f in seen if f["type"] == "message" and f["message"]["role"] == "system"]
    assert any("вернул разговор" in text for text in notes)
    assert {"type": "state", "state": "bot"} in seen
    assert {"type": "typing", "on": True, "by": "bot"} in seen
    answer = seen[-1]["message"]
    assert "300 ₽" in answer["text"]
    assert answer["links"] == [{"url": "https://shop.example/delivery", "title": "Доставка"}]  # the normal chain
    stored = await in_db(lambda: Message.objects.get(pk=answer["id"]))()
    question = await in_db(lambda: Message.objects.get(conversation_id=conversation_id, role="visitor",
                                                       client_msg_id="v_back-q"))()
    assert stored.reply_to_id == question.pk and stored.source_entry_id == knowledge["delivery"].pk
    # Run again (a redelivered task): nothing more is stored.
    assert await in_db(answer_returned)(question.pk) == 0
    assert await in_db(Message.objects.filter(conversation_id=conversation_id, role="bot").count)() == 1


def test_an_answered_or_operator_request_question_is_not_owed(shop, operator):
    conversation = services.conversation_open(bot=shop, visitor_id="v_owed")
    services.conversation_handoff(conversation=conversation, reason="button")
    services.message_receive(conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="q1")
    owed = selectors.question_left_unanswered(conversation)
    assert owed is not None and owed.client_msg_id == "q1"
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text="Сейчас уточню",
                                  client_msg_id="op1")
    assert selectors.question_left_unanswered(conversation) is None  # the operator answered it
    services.message_receive(conversation=conversation, text="Позовите оператора, пожалуйста",
                             client_msg_id="q2")
    assert selectors.question_left_unanswered(conversation) is None  # a request for a person: not answered by the bot


def test_a_question_is_not_answered_once_the_visitor_wrote_again_or_a_person_took_it_back(shop, operator):
    conversation = services.conversation_open(bot=shop, visitor_id="v_later")
    services.conversation_handoff(conversation=conversation, reason="button")
    first, _reply, _created = services.message_receive(conversation=conversation, text=DELIVERY_QUESTION,
                                                       client_msg_id="q1")
    services.message_receive(conversation=conversation, text="И ещё: есть самовывоз?", client_msg_id="q2")
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    assert services.question_answer_returned(message_id=first.pk) == []  # a newer question is the one owed
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    owed = Message.objects.get(conversation=conversation, client_msg_id="q2")
    assert services.question_answer_returned(message_id=owed.pk) == []  # an operator holds it again
    assert Conversation.objects.get(pk=conversation.pk).state == "operator"
    assert not Message.objects.filter(conversation=conversation, role="bot").exists()


async def test_without_an_owed_question_the_release_only_gives_the_note(shop, connect, operator, celery_worker_thread):
    client = await connect(shop)
    welcome = await client.hello("v_quiet")
    conversation_id = welcome["conversation_id"]
    await in_db(handoff.conversation_take)(conversation_id=conversation_id, operator=operator)
    await in_db(handoff.operator_message_send)(conversation_id=conversation_id, operator=operator,
                                               text="Чем помочь?", client_msg_id="op1")
    await in_db(handoff.conversation_release)(conversation_id=conversation_id, operator=operator)
    seen = []
    while {"type": "state", "state": "bot"} not in seen:
        seen.append(await client.recv())
    await asyncio.sleep(1.0)
    assert await client.ws.receive_nothing(timeout=1.0)
    assert not await in_db(Message.objects.filter(conversation_id=conversation_id, role="bot").exists)()
