"""The queue page and its JSON endpoints through Django's test client: scoping, one request per
decision with the next item in the answer, clear errors for bad input."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.models import ReviewItem
from tests.review.conftest import UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db

QUESTIONS = [UNKNOWN_QUESTION, "Можно ли у вас заказать торт на свадьбу?", "Есть ли у вас приют для котов?"]


@pytest.fixture
def items(shop, knowledge, ask):
    for number, question in enumerate(QUESTIONS):
        ask(shop, question, visitor=f"v{number}")
    return list(ReviewItem.objects.filter(bot=shop).order_by("answered_at", "id"))


def decide_url(item_id: int) -> str:
    return reverse("admin:review_reviewitem_decide", args=[item_id])


def test_the_page_shows_the_first_item_and_preloads_the_second(client, owner, items, django_assert_max_num_queries):
    client.force_login(owner)
    with django_assert_max_num_queries(30):
        response = client.get(reverse("admin:review_reviewitem_changelist"))
    assert response.status_code == 200
    state = response.context["state"]
    assert state["current"]["id"] == items[0].pk and state["current"]["position"] == 1
    assert state["next"]["id"] == items[1].pk and state["total"] == 3
    assert state["current"]["before"] == [UNKNOWN_QUESTION]
    assert "Всё верно" in response.content.decode() and "Добавить в знания" in response.content.decode()


@pytest.mark.parametrize(("language", "confidence", "category", "chars"), [
    ("ru", "0,23", "few", "%(n)s знака"), ("en", "0.23", "other", "%(n)s characters")])
def test_the_cards_numbers_and_counts_are_in_the_pages_language(client, owner, items, language, confidence,
                                                                 category, chars):
    """«уверенность 0,23» in Russian, "confidence 0.23" in English (the script shows the server's text, not
    the number's toFixed); the answer's length counter gets its counted forms (static/owner/plural.js)."""
    ReviewItem.objects.filter(pk=items[0].pk).update(confidence=0.2345)
    client.force_login(owner)
    response = client.get(reverse("admin:review_reviewitem_changelist"), HTTP_ACCEPT_LANGUAGE=language)
    state = response.context["state"]
    assert state["current"]["confidence_shown"] == confidence
    assert state["counts"]["chars"][category] == chars
    assert "owner/plural.js" in response.content.decode()


def test_a_decision_answers_with_the_item_after_the_preloaded_one(client, owner, items):
    client.force_login(owner)
    response = client.post(decide_url(items[0].pk), {"decision": "correct", "after": items[1].pk})
    data = response.json()
    assert response.status_code == 200 and data["ok"]
    assert data["decided"]["decision_label"] == "Всё верно"
    assert data["item"]["id"] == items[1].pk and data["item"]["position"] == 1
    assert data["next"]["id"] == items[2].pk and data["total"] == 2


def test_a_double_submit_is_refused_and_saves_nothing_twice(client, owner, items):
    client.force_login(owner)
    first = client.post(decide_url(items[0].pk), {"decision": "added", "text": "Нет, вертолётов не принимаем."})
    again = client.post(decide_url(items[0].pk), {"decision": "added", "text": "Нет, вертолётов не принимаем."})
    assert first.status_code == 200
    assert again.status_code == 409 and "уже сохранено" in again.json()["error"]
    assert items[0].corrections.count() == 1


def test_bad_answers_get_clear_errors(client, owner, items):
    client.force_login(owner)
    empty = client.post(decide_url(items[0].pk), {"decision": "fixed", "text": " "})
    huge = client.post(decide_url(items[0].pk), {"decision": "fixed", "text": "я" * 100_000})
    unknown = client.post(decide_url(items[0].pk), {"decision": "delete"})
    assert empty.status_code == 400 and "пустой" in empty.json()["error"]
    assert huge.status_code == 400 and "слишком длинный" in huge.json()["error"]
    assert unknown.status_code == 400 and "трёх кнопок" in unknown.json()["error"]
    items[0].refresh_from_db()
    assert items[0].status == "pending"


def test_another_tenants_item_is_not_found(client, other_owner, other_bot, items):
    client.force_login(other_owner)
    response = client.post(decide_url(items[0].pk), {"decision": "correct"})
    card = client.get(reverse("admin:review_reviewitem_card", args=[items[0].pk]))
    assert response.status_code == 404 and card.status_code == 404
    page = client.get(reverse("admin:review_reviewitem_changelist"))
    assert page.context["state"]["current"] is None
    items[0].refresh_from_db()
    assert items[0].status == "pending"


def test_operators_review_only_when_the_owner_allows_it(client, operator, shop, items):
    client.force_login(operator)
    assert client.post(decide_url(items[0].pk), {"decision": "correct"}).status_code in (403, 404)
    shop.review_by_operators = True
    shop.save(update_fields=["review_by_operators"])
    assert client.post(decide_url(items[0].pk), {"decision": "correct"}).status_code == 200


def test_filters_by_reason_and_date(client, owner, items, shop, ask):
    ask(shop, "нет, не то", visitor="v2")  # friction on the last item
    client.force_login(owner)
    url = reverse("admin:review_reviewitem_changelist")
    friction = client.get(url, {"reason": "friction"}).context["state"]
    assert friction["total"] == 1 and friction["current"]["id"] == items[2].pk
    assert client.get(url, {"since": "2000-01-01", "until": "2000-01-02"}).context["state"]["total"] == 0
    # The complaint's own «нет точного ответа» is no item of its own: still three.
    assert client.get(url, {"since": "not a date", "reason": "nonsense"}).context["state"]["total"] == 3


def test_undo_puts_the_item_back(client, owner, items):
    client.force_login(owner)
    client.post(decide_url(items[0].pk), {"decision": "added", "text": "Ответ владельца."})
    response = client.post(reverse("admin:review_reviewitem_undo", args=[items[0].pk]))
    assert response.status_code == 200 and response.json()["item"]["id"] == items[0].pk
    assert not items[0].corrections.get().entry.active


def test_the_public_answer_page_escapes_and_hides_undone_answers(client, shop, knowledge):
    from review.services import correction_apply

    correction = correction_apply(
        bot=shop, question="<b>Вопрос</b>?", answer="<script>x()</script> ответ", culprit_ids=[]
    )
    path = correction.entry.url.split("127.0.0.1:8000", 1)[-1]
    page = client.get(path)
    assert page.status_code == 200 and "&lt;script&gt;" in page.content.decode()
    assert client.get(path.replace(shop.public_key, "wrong-key")).status_code == 404
    from review.services import correction_undo

    correction_undo(correction=correction)
    assert client.get(path).status_code == 404


@pytest.mark.parametrize(("lang", "start"), [("ru", "Посетитель, "), ("en", "Visitor, ")])
def test_the_queue_names_who_asked_as_the_inbox_does(client, owner, items, lang, start):
    from chat.models import Conversation

    client.force_login(owner)
    response = client.get(reverse("admin:review_reviewitem_changelist"), HTTP_ACCEPT_LANGUAGE=lang)
    current = response.context["state"]["current"]
    conversation = Conversation.objects.get(messages__pk=items[0].message_id)
    assert current["visitor"] == conversation.visitor_label and current["visitor"].startswith(start)
    assert "v0" not in current["visitor"]
    named = Conversation.objects.get(messages__pk=items[1].message_id)
    named.visitor_name = "Мария"
    named.save(update_fields=["visitor_name"])
    state = client.get(reverse("admin:review_reviewitem_changelist"), HTTP_ACCEPT_LANGUAGE=lang).context["state"]
    assert state["next"]["visitor"] == "Мария"
