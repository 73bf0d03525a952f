"""`operator_replies_after`: each operator reply of a bot with the visitor's last real question
before it, in two statements however many replies there are (it was one more per reply)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from bots.models import Membership
from chat import handoff, selectors, services

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(django_user_model: Any, shop: Any) -> Any:
    user = django_user_model.objects.create_user(
        username="operator@shop.example", email="operator@shop.example", password="pw-operator-1", is_staff=True
    )
    Membership.objects.create(bot=shop, user=user, role=Membership.Role.OPERATOR)
    return user


def _say(conversation: Any, text: str) -> None:
    services.message_receive(conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex)


def _handed_off(bot: Any, operator: Any, visitor: str, said: list[str], replies: list[str]) -> Any:
    conversation = services.conversation_open(bot=bot, visitor_id=visitor)
    for text in said:
        _say(conversation, text)
    _say(conversation, "Позовите оператора")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    for text in replies:
        handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text=text,
                                      client_msg_id=uuid.uuid4().hex)
    return conversation


def _one_by_one(bot: Any) -> list[tuple[int, int, str]]:
    """What the selector must give, computed the slow way: a query per reply."""
    from chat.models import Message

    out = []
    for message in Message.objects.filter(bot=bot, role=Message.Role.OPERATOR).order_by("id"):
        question = selectors._question_before(message)
        if question is not None and not selectors.is_complaint(question.text):
            out.append((message.pk, question.pk, question.text))
    return out


def test_replies_come_with_their_questions_in_two_statements(shop, other_bot, operator, django_assert_num_queries):
    _handed_off(shop, operator, "v1", ["Есть ли подарочные сертификаты?"], ["Да, на 1000 и 3000 ₽.", "Ещё на 5000 ₽."])
    _handed_off(shop, operator, "v2", ["Здравствуйте", "Можно оплатить частями?", "Спасибо"], ["Да, через банк."])
    # Only small talk before the request: no question, the reply is left out.
    _handed_off(shop, operator, "v3", ["Добрый день"], ["Слушаю вас."])
    # The question is further back than the lookback window: left out as before.
    _handed_off(shop, operator, "v4", ["Работаете ли вы в праздники?", *["Привет"] * selectors.QUESTION_LOOKBACK],
                ["Да, без выходных."])
    _handed_off(shop, operator, "v5", ["Вы не поняли меня"], ["Простите, уточните вопрос."])  # a complaint

    with django_assert_num_queries(2):
        replies = selectors.operator_replies_after(bot=shop, after_id=0)
    assert [(r.message_id, r.question_id, r.question) for r in replies] == _one_by_one(shop)
    assert [(r.question, r.text) for r in replies] == [
        ("Есть ли подарочные сертификаты?", "Да, на 1000 и 3000 ₽."),
        ("Есть ли подарочные сертификаты?", "Ещё на 5000 ₽."),
        ("Можно оплатить частями?", "Да, через банк."),
    ]
    assert {r.conversation_id for r in replies} and all(r.author_name for r in replies)
    assert selectors.operator_replies_after(bot=other_bot, after_id=0) == []  # another tenant's none
    assert selectors.operator_replies_after(bot=shop, after_id=replies[1].message_id)[0].text == "Да, через банк."

    for n in range(6, 10):  # more replies, the same two statements
        _handed_off(shop, operator, f"w{n}", [f"Есть ли у вас товар номер {n}?"], ["Есть.", "Привезём завтра."])
    with django_assert_num_queries(2):
        assert len(selectors.operator_replies_after(bot=shop, after_id=0)) == 3 + 8
