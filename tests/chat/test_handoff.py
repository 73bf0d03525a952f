"""The operator's side of a conversation, through the services the inbox calls: take, write, hand
back, close; and what the visitor's side does meanwhile (the bot stays silent)."""

import threading

import pytest
from django.db import connection

from chat import handoff, services
from chat.exceptions import AlreadyTaken, ConversationClosed, ValidationFailed
from chat.models import Conversation, Message
from tests.chat.conftest import DELIVERY_QUESTION

State = Conversation.State


@pytest.fixture
def operator(django_user_model, bot):
    from bots.models import Membership

    user = django_user_model.objects.create_user(
        username="anna@shop.example", email="anna@shop.example", password="pw-anna-1", first_name="Анна"
    )
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
    return user


@pytest.fixture
def colleague(django_user_model, bot):
    from bots.models import Membership

    user = django_user_model.objects.create_user(username="boris@shop.example", password="pw-boris-1")
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
    return user


def _waiting(bot, visitor_id="v_1"):
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id)
    services.conversation_handoff(conversation=conversation, reason="button")
    return Conversation.objects.get(pk=conversation.pk)


def _texts(conversation, role):
    return list(Message.objects.filter(conversation=conversation, role=role).values_list("text", flat=True))


@pytest.mark.django_db
def test_the_visitor_asking_starts_the_wait(shop):
    conversation = _waiting(shop)
    assert conversation.state == State.WAITING_OPERATOR and conversation.waiting_since is not None
    assert conversation.assigned_to is None


@pytest.mark.django_db
def test_taking_assigns_the_operator_and_tells_the_visitor_who_answers(shop, operator):
    conversation = _waiting(shop)
    taken = handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    assert taken.state == State.OPERATOR and taken.assigned_to == operator and taken.waiting_since is None
    assert _texts(conversation, "system")[-1] == "Оператор Анна на связи."
    again = handoff.conversation_take(conversation_id=conversation.pk, operator=operator)  # a double click
    assert again.state == State.OPERATOR and _texts(conversation, "system").count("Оператор Анна на связи.") == 1


@pytest.mark.django_db
def test_a_conversation_held_by_another_operator_cannot_be_taken_or_answered(shop, operator, colleague):
    conversation = _waiting(shop)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    with pytest.raises(AlreadyTaken) as caught:
        handoff.conversation_take(conversation_id=conversation.pk, operator=colleague)
    assert caught.value.code == "already_taken" and caught.value.holder == "Анна"
    with pytest.raises(AlreadyTaken):
        handoff.operator_message_send(
            conversation_id=conversation.pk, operator=colleague, text="Я тут", client_msg_id="o1"
        )
    with pytest.raises(AlreadyTaken):
        handoff.conversation_release(conversation_id=conversation.pk, operator=colleague)
    assert not Message.objects.filter(conversation=conversation, role="operator").exists()


@pytest.mark.django_db(transaction=True)
def test_twenty_operators_pressing_take_at_once_exactly_one_wins(shop, django_user_model):
    from bots.models import Membership

    operators = []
    for n in range(20):
        user = django_user_model.objects.create_user(username=f"op{n}@shop.example", password="pw-op-12345")
        Membership.objects.create(bot=shop, user=user, role=Membership.Role.OPERATOR)
        operators.append(user)
    conversation = _waiting(shop)
    start, results = threading.Barrier(20), []

    def press(user):
        start.wait()
        try:
            handoff.conversation_take(conversation_id=conversation.pk, operator=user)
            results.append(("won", user.pk))
        except AlreadyTaken:
            results.append(("lost", user.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(user,)) for user in operators]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    winners = [pk for outcome, pk in results if outcome == "won"]
    assert len(results) == 20 and len(winners) == 1
    conversation.refresh_from_db()
    assert conversation.assigned_to_id == winners[0]
    assert Message.objects.filter(conversation=conversation, role="system", text__contains="на связи").count() == 1


@pytest.mark.django_db
def test_replying_to_a_waiting_conversation_takes_it_and_is_idempotent(shop, operator):
    conversation = _waiting(shop)
    first = handoff.operator_message_send(
        conversation_id=conversation.pk, operator=operator, text="  Здравствуйте, чем помочь?  ", client_msg_id="o1"
    )
    again = handoff.operator_message_send(
        conversation_id=conversation.pk, operator=operator, text="другой текст", client_msg_id="o1"
    )
    assert again == first and first.text == "Здравствуйте, чем помочь?"
    assert first.role == "operator" and first.author == operator and first.author_name == "Анна"
    conversation.refresh_from_db()
    assert conversation.state == State.OPERATOR and conversation.assigned_to == operator
    assert _texts(conversation, "operator") == ["Здравствуйте, чем помочь?"]


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "code"), [("   ", "empty"), ("я" * 100_000, "too_long")])
def test_an_empty_or_huge_operator_message_is_refused_and_nothing_is_stored(shop, operator, text, code):
    conversation = _waiting(shop)
    with pytest.raises(ValidationFailed) as caught:
        handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text=text, client_msg_id="o1")
    assert caught.value.code == code
    conversation.refresh_from_db()
    assert conversation.state == State.WAITING_OPERATOR  # a refused reply does not take the conversation
    assert not Message.objects.filter(conversation=conversation, role="operator").exists()


@pytest.mark.django_db
def test_while_an_operator_holds_it_the_bot_is_silent_and_messages_wait_unread(shop, knowledge, operator):
    conversation = _waiting(shop)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    visitor, reply, created = services.message_receive(
        conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="v1"
    )
    assert created and reply is None and visitor.flag("to_operator")
    assert not Message.objects.filter(conversation=conversation, role="bot").exists()
    conversation.refresh_from_db()
    assert conversation.unread == 1
    handoff.conversation_mark_read(conversation_id=conversation.pk)
    conversation.refresh_from_db()
    assert conversation.unread == 0


@pytest.mark.django_db
def test_asking_for_a_person_again_while_waiting_gets_a_short_note_once(shop):
    conversation = _waiting(shop)
    visitor, reply, _ = services.message_receive(
        conversation=conversation, text="Позовите оператора!", client_msg_id="v1"
    )
    assert reply is None
    notes = services.message_answer(visitor_message=visitor)
    again = services.message_answer(visitor_message=visitor)  # a resend of the same message
    assert [n.text for n in notes] == ["Оператор уже приглашён и ответит здесь, как только освободится."]
    assert again == notes
    other, _, _ = services.message_receive(
        conversation=conversation, text="У меня вопрос про доставку", client_msg_id="v2"
    )
    assert services.message_answer(visitor_message=other) == []  # an ordinary message just waits


@pytest.mark.django_db
def test_release_hands_the_conversation_back_and_the_bot_answers_again(shop, knowledge, operator):
    conversation = _waiting(shop)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    released = handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    assert released.state == State.BOT and released.assigned_to is None
    assert "снова отвечаю" in _texts(conversation, "system")[-1]
    conversation.refresh_from_db()
    _visitor, reply, _ = services.message_receive(conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="v1")
    assert reply is not None and "300 ₽" in reply.text


@pytest.mark.django_db
def test_closing_ends_the_conversation_and_the_next_hello_starts_a_new_one(shop, operator):
    conversation = _waiting(shop)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    closed = handoff.conversation_finish(conversation_id=conversation.pk, operator=operator)
    assert closed.state == State.CLOSED and closed.outcome == "closed_by_operator" and closed.closed_at
    assert "завершил разговор" in _texts(conversation, "system")[-1]
    with pytest.raises(ConversationClosed):
        handoff.operator_message_send(
            conversation_id=conversation.pk, operator=operator, text="Ещё", client_msg_id="o9"
        )
    with pytest.raises(ConversationClosed):
        handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    fresh = services.conversation_open(bot=shop, visitor_id="v_1")
    assert fresh.pk != conversation.pk and fresh.state == State.BOT


@pytest.mark.django_db
def test_the_wait_alert_is_claimed_once_per_wait(shop, operator):
    conversation = _waiting(shop)
    assert handoff.conversation_claim_alert(conversation_id=conversation.pk)
    assert not handoff.conversation_claim_alert(conversation_id=conversation.pk)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    conversation.refresh_from_db()
    services.conversation_handoff(conversation=conversation, reason="button")  # a new wait
    assert handoff.conversation_claim_alert(conversation_id=conversation.pk)
