# ruff: noqa: F811 - the review fixtures are imported by name and requested as arguments
"""The overview's numbers as they happen: conversations made through the chat's own services are
counted the moment they happen, before any outcome is written (outcomes settle half an hour later);
the empty states speak only when there is truly nothing, and say what is still to be settled."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chat import handoff
from chat.models import Conversation
from feedback.models import Outcome
from tests.owner.dashboard.conftest import stats
from tests.review.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION, ask, knowledge, operator, shop  # noqa: F401

pytestmark = pytest.mark.django_db


def _visitors(ask, shop, operator):
    """Four visitors: one answered, one not, one asks for a person who takes and writes, one only greets."""
    ask(shop, DELIVERY_QUESTION, visitor="v_answered")
    ask(shop, UNKNOWN_QUESTION, visitor="v_unanswered")
    ask(shop, DELIVERY_QUESTION, visitor="v_person")
    ask(shop, "соедините с оператором", visitor="v_person")
    waiting = Conversation.objects.get(bot=shop, visitor_id="v_person")
    handoff.conversation_take(conversation_id=waiting.pk, operator=operator)
    ask(shop, "Здравствуйте!", visitor="v_hello")


def test_the_cards_count_what_happened_before_any_outcome(client, owner, shop, knowledge, ask, operator):
    _visitors(ask, shop, operator)
    assert not Outcome.objects.filter(bot=shop).exists()  # nothing settled: the conversations are fresh
    client.force_login(owner)
    html = client.get(f"/b/{shop.slug}/").content.decode()
    numbers = stats(html)
    assert numbers["conversations"] == 4
    assert numbers["answered"] == 1  # v_person's answer came before the person: handed off, not the bot's
    assert numbers["handed_off"] == 1
    assert numbers["unanswered"] == 1
    assert "Разговоров пока нет" not in html and "Вопросов без ответа не было." not in html
    assert "Пока на все вопросы нашёлся ответ" not in html
    assert "Бот не нашёл ответа на 1 вопрос." in html
    assert "ещё 4 разговора без итога на графике" in html
    assert "Итоги подводятся, когда разговор затих на полчаса" in html


def test_the_marks_are_set_once_and_survive_the_way_back_to_the_bot(shop, knowledge, ask, operator):
    ask(shop, "соедините с оператором", visitor="v1")
    conversation = Conversation.objects.get(bot=shop, visitor_id="v1")
    first = conversation.handed_off_at
    assert first is not None and conversation.answered_at is None
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    ask(shop, DELIVERY_QUESTION, visitor="v1")
    conversation.refresh_from_db()
    assert conversation.handed_off_at == first and conversation.answered_at is not None
    answered = conversation.answered_at
    ask(shop, DELIVERY_QUESTION, visitor="v1")
    conversation.refresh_from_db()
    assert conversation.answered_at == answered


def test_the_english_page_counts_the_same(client, owner, shop, knowledge, ask, operator):
    _visitors(ask, shop, operator)
    client.force_login(owner)
    html = client.get(f"/b/{shop.slug}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert stats(html)["unanswered"] == 1
    assert "question without an answer" in html and "4 more conversations" in html


def test_the_admins_outcomes_page_says_conversations_are_not_settled_yet(client, owner, shop, knowledge, ask,
                                                                          operator):
    _visitors(ask, shop, operator)
    client.force_login(owner)
    html = client.get(reverse("admin:feedback_outcome_changelist"), {"bot": shop.pk}).content.decode()
    assert "Разговоров ещё не было" not in html
    assert "4 разговора ещё без итога" in html


def test_another_bots_conversations_are_not_counted(client, owner, shop, knowledge, ask,
                                                    operator, other_bot):
    ask(other_bot, UNKNOWN_QUESTION, visitor="v_other")
    ask(other_bot, "соедините с оператором", visitor="v_other")
    client.force_login(owner)
    assert stats(client.get(f"/b/{shop.slug}/").content.decode()) == {
        "conversations": 0, "answered": 0, "handed_off": 0, "unanswered": 0, "leads": 0, "thumbs_down": 0,
        "review_pending": 0,
    }
