"""A visitor asking the same question again and again in one conversation makes one review item,
counted, not one item per turn; the reasons stay those the chat's flags give (friction once the
question is asked again: the rephrase rule), and another question or conversation gets its own."""

from __future__ import annotations

import pytest

from review import services
from review.models import ReviewItem
from tests.review.conftest import UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db

REPHRASED = "А парковка для вертолёта на крыше офиса у вас есть?"
OTHER = "Можно ли привести с собой на склад слона?"


def test_the_same_question_asked_again_counts_on_one_item(shop, knowledge, ask):
    _m, first = ask(shop, UNKNOWN_QUESTION)
    [item] = ReviewItem.objects.all()
    assert item.message_id == first.pk and item.repeats == 1 and item.reasons == ["low_confidence"]
    assert item.conversation_id == first.conversation_id

    _m, second = ask(shop, UNKNOWN_QUESTION)
    _m, third = ask(shop, UNKNOWN_QUESTION)
    [item] = ReviewItem.objects.all()
    assert item.message_id == first.pk
    assert item.repeat_ids == sorted([second.pk, third.pk]) and item.repeats == 3
    assert item.last_seen_at == third.created_at
    # Asked again in a row: the chat flagged the earlier answers as friction (its rephrase rule).
    assert item.reasons == ["friction", "low_confidence"]


def test_a_rephrasing_counts_on_the_same_item(shop, knowledge, ask):
    ask(shop, UNKNOWN_QUESTION)
    _m, again = ask(shop, REPHRASED)
    [item] = ReviewItem.objects.all()
    assert item.repeats == 2 and item.repeat_ids == [again.pk]


def test_another_question_gets_its_own_item_and_another_conversation_counts_on_the_first(shop, knowledge, ask):
    ask(shop, UNKNOWN_QUESTION, visitor="v1")
    ask(shop, OTHER, visitor="v1")
    ask(shop, UNKNOWN_QUESTION, visitor="v2")  # word for word in another conversation: counted, not queued
    items = list(ReviewItem.objects.order_by("id"))
    assert [(i.question, i.repeats) for i in items] == [(UNKNOWN_QUESTION, 2), (OTHER, 1)]
    assert items[0].reasons == ["low_confidence"]  # not asked again *in a row*: no friction


def test_recording_again_is_idempotent(shop, knowledge, ask):
    """The sweep re-records every flagged answer: nothing is counted twice or queued again."""
    _m, first = ask(shop, UNKNOWN_QUESTION)
    _m, second = ask(shop, UNKNOWN_QUESTION)
    for message_id in (second.pk, first.pk, second.pk):
        services.review_item_record(message_id=message_id)
    assert services.review_sweep(bot=shop, since=first.created_at) >= 2
    [item] = ReviewItem.objects.all()
    assert item.repeats == 2 and item.repeat_ids == [second.pk]


def test_a_decided_item_does_not_swallow_later_askings(shop, knowledge, ask, owner):
    ask(shop, UNKNOWN_QUESTION)
    [item] = ReviewItem.objects.all()
    services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="correct", user=owner)
    _m, later = ask(shop, UNKNOWN_QUESTION)
    newer = ReviewItem.objects.exclude(pk=item.pk).get()
    assert newer.message_id == later.pk and newer.repeats == 1


def test_a_repeat_costs_no_new_row(shop, knowledge, ask, django_assert_num_queries):
    ask(shop, UNKNOWN_QUESTION)
    from chat import services as chat_services

    conversation = chat_services.conversation_open(bot=shop, visitor_id="v1")
    _v, second, _c = chat_services.message_receive(conversation=conversation, text=UNKNOWN_QUESTION,
                                                   client_msg_id="again")
    assert second is not None
    # review_target, the savepoint pair of this test's transaction, the locks, the item by answer,
    # the conversation's pending items, the UPDATE: no INSERT of an item or of its history.
    with django_assert_num_queries(7) as captured:
        services.review_item_record(message_id=second.pk)
    assert not any(q["sql"].startswith("INSERT") for q in captured.captured_queries)
    assert ReviewItem.objects.get().repeats == 2


def test_same_question_reads_words_not_punctuation():
    assert services.same_question("Доставка?", "доставка!!")
    assert services.same_question("Где ваш офис", "где ВАШ офис?")
    assert not services.same_question("Доставка?", "Оплата?")
    assert not services.same_question("", "")
