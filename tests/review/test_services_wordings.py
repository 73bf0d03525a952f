"""Wordings of a correction from the review queue: the owner's question, the visitor's words kept,
more wordings; bad input changes nothing."""

from __future__ import annotations

import pytest

from knowledge.models import Entry, Wording
from review import services
from review.exceptions import ItemNotFound, QuestionInvalid, WordingTaken
from review.models import Correction, ReviewItem
from tests.review.conftest import DELIVERY_QUESTION

pytestmark = pytest.mark.django_db

TYPO = "как аплатить заказ картой"


def _item(shop, ask, text):
    shop.confidence_threshold = 0.99
    shop.save(update_fields=["confidence_threshold"])
    _message, reply = ask(shop, text)
    return ReviewItem.objects.get(message=reply)


def test_the_owner_rewrites_a_misspelt_question_and_the_visitors_words_stay_a_wording(shop, knowledge, ask, owner):
    item = _item(shop, ask, TYPO)
    services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="added",
                                text="Оплату подключают в кабинете.", question="Как подключить оплату?",
                                wordings=["Как настроить приём платежей?", ""], user=owner)
    entry = Correction.objects.get(item=item).entry
    assert entry.title == "Как подключить оплату?"
    assert list(Wording.objects.filter(entry=entry).values_list("origin", "text")) == [
        ("question", "Как подключить оплату?"), ("owner", "Как настроить приём платежей?"), ("visitor", TYPO)]


def test_a_wording_another_correction_has_is_refused_and_nothing_is_written(shop, knowledge, ask, owner):
    services.correction_apply(bot=shop, question=DELIVERY_QUESTION, answer="350 ₽.", culprit_ids=[])
    item = _item(shop, ask, "Сколько стоит доставка в Тверь?")
    before = (Entry.objects.count(), Wording.objects.count(), Correction.objects.count())
    with pytest.raises(WordingTaken) as refused:
        services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="fixed", text="400 ₽.",
                                    wordings=["сколько стоит доставка по москве"], user=owner)
    assert "поправки №" in refused.value.message and refused.value.status == 409
    assert (Entry.objects.count(), Wording.objects.count(), Correction.objects.count()) == before
    item.refresh_from_db()
    assert item.status == ReviewItem.Status.PENDING


def test_too_many_or_too_long_wordings_and_another_bots_item_are_refused(shop, knowledge, ask, owner, other_bot):
    item = _item(shop, ask, DELIVERY_QUESTION)
    with pytest.raises(QuestionInvalid):
        services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="fixed", text="ответ",
                                    wordings=[f"вопрос {n}" for n in range(services.WORDINGS_MAX + 1)])
    with pytest.raises(QuestionInvalid):
        services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="fixed", text="ответ",
                                    question="в" * (services.QUESTION_MAX + 1))
    with pytest.raises(ItemNotFound):
        services.review_item_decide(item_id=item.pk, bot_ids=[other_bot.pk], decision="fixed", text="ответ")
    assert not Correction.objects.exists() and not Wording.objects.filter(entry__kind="correction").exists()


def test_the_reach_endpoint_answers_for_the_owners_bot_only(shop, knowledge, ask, owner, client, other_owner):
    item = _item(shop, ask, DELIVERY_QUESTION)
    ask(shop, "Какая цена доставки по Москве?", visitor="v9")
    url = f"/admin/review/reviewitem/{item.pk}/reach/"
    client.force_login(owner)
    data = client.post(url, {"question": DELIVERY_QUESTION, "wordings": ""}).json()
    assert data["ok"] and "Какая цена доставки по Москве?" in [r["question"] for r in data["would_answer"]]
    assert client.post(url, {"question": ""}).json()["ok"]  # empty: the visitor's own question
    too_long = client.post(url, {"question": "в" * 2000})
    assert too_long.status_code == 400 and "длинный" in too_long.json()["error"]
    client.force_login(other_owner)
    assert client.post(url, {"question": DELIVERY_QUESTION}).status_code in (403, 404)


def test_the_same_question_from_several_conversations_is_one_item_with_a_count(shop, knowledge, ask):
    first = _item(shop, ask, DELIVERY_QUESTION)
    ask(shop, "сколько стоит доставка по москве", visitor="v2")
    ask(shop, "Сколько стоит доставка по Москве?!", visitor="v3")
    ask(shop, "Сколько стоит доставка в Тверь?", visitor="v4")  # another question: its own item
    first.refresh_from_db()
    assert first.repeats == 3 and len(first.repeat_ids) == 2
    assert ReviewItem.objects.filter(bot=shop).count() == 2


def test_the_reach_lists_close_questions_it_leaves_and_what_tells_them_apart(shop, knowledge, ask):
    from review.reach import correction_reach

    ask(shop, "Сколько стоит доставка в Тверь?", visitor="v1")
    ask(shop, "Какая цена доставки по Москве?", visitor="v2")
    ask(shop, "Сколько стоит доставка в Тверь?", visitor="v3")

    reach = correction_reach(bot=shop, question=DELIVERY_QUESTION, answer="350 ₽.")
    with_it = correction_reach(bot=shop, question=DELIVERY_QUESTION, answer="350 ₽.",
                               wordings=["Сколько стоит доставка в Тверь?"])

    close = {row.question: row for row in reach.not_taken}
    assert "Какая цена доставки по Москве?" in [row.question for row in reach.would_answer]
    assert close["Сколько стоит доставка в Тверь?"].other_words == ["Тверь", "Москве"]
    assert close["Сколько стоит доставка в Тверь?"].times == 2
    # The owner says it asks the same: one more wording, and it is taken.
    assert "Сколько стоит доставка в Тверь?" in [row.question for row in with_it.would_answer]
    assert "Сколько стоит доставка в Тверь?" not in [row.question for row in with_it.not_taken]
