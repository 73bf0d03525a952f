"""«Оператор ответил: … Добавить в справку?»: operators' answers in handed-off conversations, to
questions no entry covers, proposed as entries; accepted (edited or not) through correction memory,
so the next visitor gets the answer; dismissed; never twice; scoped to the owner's bots."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import reverse

from chat import handoff, services
from feedback.gaps import gaps_refresh
from feedback.models import Gap, OperatorAnswer
from feedback.operator_answers import (
    ProposalDecided,
    answer_part,
    operator_answer_accept,
    operator_answer_dismiss,
    operator_answers_refresh,
)
from knowledge.models import Entry
from review.exceptions import ReviewError
from tests.chat.conftest import DELIVERY_QUESTION

pytestmark = pytest.mark.django_db

GIFT_QUESTION = "Есть ли у вас подарочные сертификаты?"
GIFT_ANSWER = "Да, подарочные сертификаты на 1000, 3000 и 5000 ₽ продаются на кассе и на сайте."


def _handed_off(bot: Any, question: str, operator: Any, *replies: str, visitor: str = "v1") -> Any:
    """A visitor asks, asks for a person; the operator takes the conversation and answers."""
    conversation = services.conversation_open(bot=bot, visitor_id=visitor)
    services.message_receive(conversation=conversation, text=question, client_msg_id=uuid.uuid4().hex)
    services.message_receive(conversation=conversation, text="Позовите оператора", client_msg_id=uuid.uuid4().hex)
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    for text in replies:
        handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text=text,
                                      client_msg_id=uuid.uuid4().hex)
    return conversation


def test_the_operators_answer_is_proposed_without_small_talk(shop, knowledge, operator):
    _handed_off(shop, GIFT_QUESTION, operator, "Здравствуйте! Меня зовут Анна.", "Минутку, уточню.", GIFT_ANSWER)
    assert operator_answers_refresh(bot=shop) == 1
    assert operator_answers_refresh(bot=shop) == 0  # the cursor moved on
    proposal = OperatorAnswer.objects.get(bot=shop)
    assert (proposal.question, proposal.answer, proposal.status) == (GIFT_QUESTION, GIFT_ANSWER, "proposed")


def test_a_later_message_to_the_same_question_grows_the_proposal(shop, knowledge, operator):
    conversation = _handed_off(shop, GIFT_QUESTION, operator, GIFT_ANSWER)
    operator_answers_refresh(bot=shop)
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator,
                                  text="Срок действия сертификата — год.", client_msg_id="o-late")
    assert operator_answers_refresh(bot=shop) == 1
    assert OperatorAnswer.objects.get(bot=shop).answer == f"{GIFT_ANSWER}\nСрок действия сертификата — год."


def test_a_question_the_knowledge_covers_is_not_proposed(shop, knowledge, operator):
    _handed_off(shop, DELIVERY_QUESTION, operator, "Доставка по Москве стоит 300 ₽, от 5000 ₽ бесплатно.")
    operator_answers_refresh(bot=shop)
    assert not OperatorAnswer.objects.exists()


def test_accepting_an_edited_answer_teaches_the_bot(shop, knowledge, operator, owner):
    _handed_off(shop, GIFT_QUESTION, operator, GIFT_ANSWER)
    gaps_refresh(bot=shop)
    operator_answers_refresh(bot=shop)
    proposal = OperatorAnswer.objects.get(bot=shop)
    edited = GIFT_ANSWER + " Срок действия — год."
    accepted = operator_answer_accept(proposal=proposal, question=GIFT_QUESTION, answer=edited, user=owner)
    assert accepted.status == "accepted" and accepted.entry is not None
    assert (accepted.entry.kind, accepted.entry.text.endswith("год.")) == (Entry.Kind.QA, True)
    later = services.conversation_open(bot=shop, visitor_id="later")
    _message, reply, _created = services.message_receive(
        conversation=later, text="Продаёте подарочные сертификаты?", client_msg_id="c-later"
    )
    assert reply is not None and reply.source_entry_id == accepted.entry_id
    gap = Gap.objects.get(bot=shop, questions__message_id=proposal.question_message_id)
    assert (gap.status, gap.entry_id) == ("answered", accepted.entry_id)  # its Gaps topic is answered too
    with pytest.raises(ProposalDecided):  # a double submit adds nothing
        operator_answer_accept(proposal=proposal, question=GIFT_QUESTION, answer=edited, user=owner)
    assert Entry.objects.filter(bot=shop, kind=Entry.Kind.QA, text=edited).count() == 1


def test_an_empty_answer_is_refused_and_the_proposal_stays(shop, knowledge, operator, owner):
    _handed_off(shop, GIFT_QUESTION, operator, GIFT_ANSWER)
    operator_answers_refresh(bot=shop)
    proposal = OperatorAnswer.objects.get(bot=shop)
    entries = Entry.objects.filter(bot=shop).count()
    with pytest.raises(ReviewError, match="пустой"):
        operator_answer_accept(proposal=proposal, question=GIFT_QUESTION, answer="   ", user=owner)
    proposal.refresh_from_db()
    assert proposal.status == "proposed" and Entry.objects.filter(bot=shop).count() == entries


def test_dismissing_removes_it_and_writes_nothing(shop, knowledge, operator):
    _handed_off(shop, GIFT_QUESTION, operator, GIFT_ANSWER)
    operator_answers_refresh(bot=shop)
    entries = Entry.objects.filter(bot=shop).count()
    dismissed = operator_answer_dismiss(proposal=OperatorAnswer.objects.get(bot=shop))
    assert dismissed.status == "dismissed" and Entry.objects.filter(bot=shop).count() == entries


def test_the_gaps_page_shows_proposals_and_only_to_their_bots_people(client, shop, knowledge, operator, owner,
                                                                      other_owner):
    _handed_off(shop, GIFT_QUESTION, operator, GIFT_ANSWER)
    client.force_login(owner)
    page = client.get(reverse("admin:feedback_gap_changelist")).content.decode()
    assert "Оператор ответил" in page and GIFT_ANSWER in page
    proposal = OperatorAnswer.objects.get(bot=shop)
    accept = reverse("admin:feedback_operator_answer_accept", args=[proposal.pk])

    client.force_login(other_owner)
    assert GIFT_ANSWER not in client.get(reverse("admin:feedback_gap_changelist")).content.decode()
    assert client.post(accept, {"question": GIFT_QUESTION, "answer": "чужое"}).status_code == 404
    dismiss = reverse("admin:feedback_operator_answer_dismiss", args=[proposal.pk])
    assert client.post(dismiss).status_code == 404

    client.force_login(owner)
    done = client.post(accept, {"question": GIFT_QUESTION, "answer": GIFT_ANSWER}, follow=True).content.decode()
    assert "Добавлено в справку" in done
    again = client.post(accept, {"question": GIFT_QUESTION, "answer": GIFT_ANSWER}, follow=True).content.decode()
    assert "уже решено" in again
    assert Entry.objects.filter(bot=shop, text=GIFT_ANSWER).count() == 1


@pytest.mark.parametrize(("text", "kept"), [
    ("Здравствуйте!", ""),
    ("Добрый день, меня зовут Анна", ""),
    ("Сейчас посмотрю", ""),
    ("Спасибо за ожидание", ""),
    ("Здравствуйте! Да, курьер принимает карты.", "Да, курьер принимает карты."),
    ("В Казань доставка 500 рублей, сейчас уточню срок", "В Казань доставка 500 рублей, сейчас уточню срок"),
])
def test_what_of_an_operators_message_is_worth_an_entry(text, kept):
    assert answer_part(text) == kept
