"""Handing a conversation to another operator of the same bot: the other operator then holds it
(their inbox hears it as theirs) and the visitor learns who answers; handing it to another bot's
operator, a non-member or by someone who does not hold it is refused in words, nothing changed."""

import pytest

from chat.models import Conversation
from tests.chat.conftest import in_db

pytestmark = pytest.mark.django_db(transaction=True)


async def _held(connect, connect_operator, shop, user, visitor_id):
    visitor = await connect(shop)
    welcome = await visitor.hello(visitor_id)
    op = await connect_operator(user)
    await op.hello()
    await op.send(type="take", conversation_id=welcome["conversation_id"])
    await op.conversation("operator")
    await visitor.recv(), await visitor.recv()  # «на связи», state operator
    return visitor, op, welcome["conversation_id"]


def _holder(conversation_id):
    return Conversation.objects.get(pk=conversation_id).assigned_to_id


async def test_the_holder_hands_it_to_another_operator_of_the_bot(
    shop, connect, connect_operator, operator, second_operator
):
    visitor, anna, conversation_id = await _held(connect, connect_operator, shop, operator, "v_t1")
    boris = await connect_operator(second_operator)
    await boris.hello()
    await anna.send(type="transfer", conversation_id=conversation_id, to=second_operator.pk)
    theirs = await boris.conversation("operator")
    assert theirs["assigned_to"] == {"id": second_operator.pk, "name": "Борис"}
    told = await visitor.recv()
    assert told["message"]["role"] == "system" and told["message"]["text"] == "Оператор Борис на связи."
    assert await in_db(_holder)(conversation_id) == second_operator.pk
    await anna.send(type="message", conversation_id=conversation_id, client_msg_id="late", text="Я ещё тут")
    assert (await anna.until("error"))["code"] == "already_taken"  # it is Борис's now


@pytest.mark.parametrize("who", ["other_bot_operator", "stranger", "nobody"])
async def test_a_transfer_outside_the_bot_is_refused_and_changes_nothing(
    who, shop, connect, connect_operator, operator, other_operator, django_user_model
):
    _visitor, anna, conversation_id = await _held(connect, connect_operator, shop, operator, f"v_t_{who}")
    stranger = await in_db(django_user_model.objects.create_user)(username="x@example.com", password="pw-x-12345")
    to = {"other_bot_operator": other_operator.pk, "stranger": stranger.pk, "nobody": 999_999_999}[who]
    await anna.send(type="transfer", conversation_id=conversation_id, to=to)
    error = await anna.until("error")
    assert error["code"] == "transfer_refused"
    assert error["message"] == "Передать разговор можно только оператору этого бота."
    assert await in_db(_holder)(conversation_id) == operator.pk


async def test_only_the_holder_may_hand_it_over(
    shop, connect, connect_operator, operator, second_operator
):
    _visitor, _anna, conversation_id = await _held(connect, connect_operator, shop, operator, "v_t2")
    boris = await connect_operator(second_operator)
    await boris.hello()
    await boris.send(type="transfer", conversation_id=conversation_id, to=second_operator.pk)
    assert (await boris.until("error"))["code"] == "already_taken"
    assert await in_db(_holder)(conversation_id) == operator.pk


async def test_a_conversation_nobody_holds_is_taken_before_it_is_handed_over(shop, connect, connect_operator,
                                                                           operator, second_operator):
    visitor = await connect(shop)
    welcome = await visitor.hello("v_t3")
    anna = await connect_operator(operator, accept_language="en-US,en;q=0.9")
    await anna.hello()
    await anna.send(type="transfer", conversation_id=welcome["conversation_id"], to=second_operator.pk)
    error = await anna.until("error")
    assert error["code"] == "transfer_refused" and error["message"].startswith("Only a conversation you hold")
