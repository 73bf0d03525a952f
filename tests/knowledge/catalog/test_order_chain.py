"""The order route of the answer chain, through the chat services a widget uses, against a real
local order system: the number from the message, asked once, honest failures, limits and the log.

Cross-cutting: the chain's order route (answers/orders.py, answers/pipeline.py, chat/services.py,
knowledge/catalog/endpoint.py); it stays here for this folder's shop_api fixtures."""

from __future__ import annotations

import uuid

import pytest

from answers.orders import Caller
from answers.pipeline import answer
from chat import services
from knowledge.catalog.models import OrderLookup
from knowledge.catalog.services import order_endpoint_configure

pytestmark = pytest.mark.django_db

OPERATOR = {"id": "operator", "label": "Позвать оператора"}


def _say(conversation, text):
    _question, reply, _created = services.message_receive(
        conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex
    )
    assert reply is not None
    return reply


@pytest.fixture
def talk(bot):
    return services.conversation_open(bot=bot, visitor_id="visitor-1", ip="203.0.113.7")


def test_the_number_in_the_question_is_looked_up_and_the_reply_is_filled_from_the_response(endpoint, talk):
    reply = _say(talk, "где мой заказ 48213?")
    assert reply.intent == "order"
    assert reply.text == (
        "Заказ 48213: Передан в службу доставки.\nОжидаемая дата доставки: 5 декабря 2026."
        "\nОтследить посылку можно по ссылке ниже."
    )
    assert reply.links == [{"url": "https://track.example/RU48213", "title": "Отследить посылку"}]
    assert reply.llm_meta["route"] == "order" and reply.llm_meta["order_result"] == "found"
    assert reply.llm_meta["provider"] is None  # no model was asked for any of it
    row = OrderLookup.objects.get()
    assert (row.number, row.result, row.visitor_id, row.ip, row.conversation_id) == (
        "48213", "found", "visitor-1", "203.0.113.7", talk.pk)


def test_without_a_number_it_asks_once_and_reads_the_next_message_as_the_number(endpoint, talk, shop_api):
    asked = _say(talk, "Где мой заказ?")
    assert "номер заказа" in asked.text and asked.llm_meta["awaiting"] == "order_number"
    assert shop_api.hits == []
    status = _say(talk, "48213")
    assert status.text.startswith("Заказ 48213: Передан в службу доставки.")
    # back to normal: a bare number now is no order question
    after = _say(talk, "48214")
    assert after.intent != "order" and len(shop_api.hits) == 1


def test_a_next_message_without_a_number_goes_back_to_the_normal_chain(endpoint, talk, shop_api):
    _say(talk, "Где мой заказ?")
    reply = _say(talk, "Сколько стоит доставка?")
    assert reply.intent != "order" and shop_api.hits == []
    again = _say(talk, "12345")
    assert again.intent != "order" and shop_api.hits == []  # asked once only


def test_an_unknown_number_is_said_honestly_with_the_operator_button(endpoint, talk):
    reply = _say(talk, "статус заказа 99999")
    assert reply.text.startswith("Я не нашёл заказ с таким номером (99999).")
    assert reply.buttons == [OPERATOR] and reply.links == []
    assert OrderLookup.objects.get().result == "not_found"


@pytest.mark.parametrize("path", ["html", "garbage", "down", "slow", "48215"])
def test_an_endpoint_that_fails_gives_cannot_check_now_with_the_operator_button(bot, shop_api, talk, path):
    order_endpoint_configure(bot=bot, url_template=f"{shop_api.origin}/api/orders/{path}?n={{number}}")
    reply = _say(talk, "где мой заказ 48213?")
    assert reply.text.startswith("Не могу проверить заказ сейчас")
    assert reply.buttons == [OPERATOR] and reply.links == []
    assert "Передан" not in reply.text
    assert OrderLookup.objects.get().result == "unavailable"


def test_a_redirect_to_a_private_address_gives_cannot_check_now(endpoint, shop_api, trap, talk, settings):
    settings.CRAWL_ALLOW_PRIVATE = False
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    shop_api.redirect_to = f"{trap.origin}/"
    order_endpoint_configure(bot=endpoint.bot, url_template=f"{shop_api.origin}/redirect?n={{number}}")
    reply = _say(talk, "где мой заказ 48213?")
    assert reply.text.startswith("Не могу проверить заказ сейчас") and trap.hits == []


def test_lookups_are_limited_per_visitor_and_per_address(endpoint, bot, settings, shop_api):
    settings.CHAT_RATE_ORDERS_VISITOR, settings.CHAT_RATE_ORDERS_IP = 2, 4
    first = services.conversation_open(bot=bot, visitor_id="enumerator", ip="198.51.100.1")
    for number in ("10001", "10002"):
        assert _say(first, f"где заказ {number}?").text.startswith("Я не нашёл")
    limited = _say(first, "где заказ 10003?")
    assert limited.text.startswith("Слишком много проверок заказов подряд") and limited.buttons == [OPERATOR]
    # a new visitor id from the same address (refused attempts count too): one more, then the address is over
    second = services.conversation_open(bot=bot, visitor_id="enumerator-2", ip="198.51.100.1")
    assert _say(second, "где заказ 10004?").text.startswith("Я не нашёл")
    assert _say(second, "где заказ 10005?").text.startswith("Слишком много")
    assert len(shop_api.hits) == 3
    assert OrderLookup.objects.filter(result="limited").count() == 2


def test_with_a_second_factor_nothing_is_looked_up_or_shown_before_it_matches(bot, endpoint, talk, shop_api):
    order_endpoint_configure(bot=bot, url_template=endpoint.url_template, status_pointer="/status",
                             phone_pointer="/customer/phone", email_pointer="/customer/email", second_factor=True)
    asked = _say(talk, "где мой заказ 48213?")
    assert "последние 4 цифры телефона" in asked.text and shop_api.hits == []
    wrong = _say(talk, "0000")
    assert wrong.text.startswith("Я не нашёл заказ 48213 с такими данными") and "Передан" not in wrong.text
    # an unknown number reads exactly like a wrong factor: nothing says whether an order exists
    _say(talk, "где мой заказ 99999?")
    unknown = _say(talk, "0000")
    assert unknown.text == wrong.text.replace("48213", "99999")
    # a new order question while the factor is awaited is a new number, not a factor
    assert "Чтобы показать заказ 77777" in _say(talk, "где мой заказ 77777?").text
    again = _say(talk, "ой, нет: где заказ 48213?")
    assert "Чтобы показать заказ 48213" in again.text and len(shop_api.hits) == 2
    shown = _say(talk, "ivan@example.ru")
    assert shown.text.startswith("Заказ 48213: Передан в службу доставки.")
    results = list(OrderLookup.objects.order_by("id").values_list("result", flat=True))
    assert results == ["factor_mismatch", "not_found", "found"]


def test_an_english_visitor_gets_english_texts(bot, endpoint, talk):
    bot.language = "en"
    bot.save(update_fields=["language"])
    reply = _say(talk, "where is my order 48213?")
    assert reply.text.startswith("Order 48213: Передан в службу доставки.\nExpected delivery date: 5 December 2026.")
    assert reply.links[0]["title"] == "Track the parcel"
    assert _say(talk, "order status 99999").text.startswith("I could not find an order with this number (99999)")


def test_a_huge_order_number_gets_a_clear_refusal_and_is_never_sent(endpoint, talk, shop_api):
    from chat.exceptions import ValidationFailed

    with pytest.raises(ValidationFailed) as refused:  # the widget's limit: a clear error, nothing stored
        _say(talk, "где мой заказ " + "7" * 5000)
    assert refused.value.code == "too_long"
    reply = _say(talk, "где мой заказ " + "7" * 1500)
    assert reply.text.startswith("Это не похоже на номер заказа") and reply.buttons == [OPERATOR]
    direct = answer(bot=endpoint.bot, text="где мой заказ " + "7" * 5000, history=[], caller=Caller())
    assert direct.text.startswith("Это не похоже на номер заказа")
    assert shop_api.hits == []
    assert set(OrderLookup.objects.values_list("result", flat=True)) == {"bad_number"}
    assert all(len(n) == 64 for n in OrderLookup.objects.values_list("number", flat=True))


def test_a_bot_without_an_endpoint_says_so_and_offers_a_person(bot, talk):
    reply = _say(talk, "где мой заказ 48213?")
    assert reply.text.startswith("Проверить заказ в этом чате я пока не могу") and reply.buttons == [OPERATOR]
    assert OrderLookup.objects.count() == 0


def test_a_switched_off_endpoint_is_not_called(bot, endpoint, talk, shop_api):
    endpoint.enabled = False
    endpoint.save(update_fields=["enabled"])
    assert _say(talk, "где мой заказ 48213?").text.startswith("Проверить заказ в этом чате")
    assert shop_api.hits == []


def test_another_bots_endpoint_is_never_used(other_bot, endpoint, shop_api):
    talk = services.conversation_open(bot=other_bot, visitor_id="visitor-9")
    assert _say(talk, "где мой заказ 48213?").text.startswith("Проверить заказ в этом чате")
    assert shop_api.hits == []
