"""Operators in Telegram, through the real webhook, a real Celery worker and the fake Bot API: an
operator links their chat with a one-time code (a wrong, expired or foreign one links nothing); a
conversation that starts waiting reaches every linked operator with «Взять»; one takes it, the
other hears who did; replying to the notice answers the visitor in their own channel; «Вернуть
боту» and «Завершить» move the conversation; an operator of another bot moves nothing."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from bots.models import Membership
from chat import services as chat_services
from chat.models import Conversation, Message
from messengers import operators, services
from messengers.models import Connection, Delivery, MessengerChat, OperatorLink, OperatorLinkCode
from tests.fakes.telegram_api import callback_update, start_update, text_update
from tests.messengers.conftest import CHAT, SECRET_HEADER

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 30.0
ANNA, BORIS = 7770001, 7770002  # the operators' Telegram chats
OTHER_TOKEN = "8111111111:AAOtherTelegramTokenForTests_shop"


def _wait(check: Any, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true in time")
        time.sleep(0.05)


def _operator(django_user_model: Any, bot: Any, username: str, first_name: str) -> Any:
    user = django_user_model.objects.create_user(username=username, first_name=first_name)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OPERATOR)
    return user


def _link(post: Any, fake: Any, user: Any, bot: Any, chat_id: int, update_id: int) -> None:
    code = operators.code_make(user=user, bot=bot).code
    post(start_update(update_id, chat_id, f"op_{code}"))
    reply = fake.wait_for("sendMessage", chat_id=chat_id, timeout=WAIT)[-1].params["text"]
    assert reply.startswith("Готово: сюда будут приходить разговоры бота")


def _notice(chat_id: int, conversation: Conversation) -> Delivery:
    """The delivered notice of the conversation's wait in the operator's chat."""
    found: list[Delivery] = []

    def delivered() -> bool:
        found[:] = Delivery.objects.filter(chat__chat_id=str(chat_id), conversation=conversation,
                                           key__startswith="w:", status=Delivery.Status.DELIVERED)
        return bool(found)

    _wait(delivered)
    return found[0]


def _reply_to(update_id: int, chat_id: int, text: str, sent_message_id: int) -> dict[str, Any]:
    update = text_update(update_id, chat_id, text, first_name="Анна")
    update["message"]["reply_to_message"] = {
        "message_id": sent_message_id, "date": int(time.time()), "text": "Ждёт оператора",
        "chat": {"id": chat_id, "type": "private", "first_name": "Анна"},
    }
    return update


def _widget_waiting(bot: Any) -> Conversation:
    conversation = chat_services.conversation_open(bot=bot, visitor_id="v-op-1", visitor_name="Мария")
    chat_services.message_take(conversation=conversation, text="Можно оплатить по счёту для юрлица?",
                               client_msg_id="w-1", answer_rules=False)
    chat_services.conversation_handoff(conversation=conversation, reason="button")
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.WAITING_OPERATOR
    return conversation


@pytest.fixture
def anna(shop: Any, django_user_model: Any) -> Any:
    return _operator(django_user_model, shop, "anna@shop.example", "Анна")


@pytest.fixture
def boris(shop: Any, django_user_model: Any) -> Any:
    return _operator(django_user_model, shop, "boris@shop.example", "Борис")


def test_a_good_code_links_the_chat_and_opens_no_conversation(
    post_update, fake_telegram, celery_worker_thread, shop, anna
):
    _link(post_update, fake_telegram, anna, shop, ANNA, 1)
    link = OperatorLink.objects.get(user=anna)
    assert link.chat.chat_id == str(ANNA) and link.connection.bot == shop
    assert OperatorLinkCode.objects.get(user=anna).used_at is not None

    post_update(text_update(2, ANNA, "Привет, что тут делать?"))  # a linked chat is never a visitor
    hint = fake_telegram.wait_for("sendMessage", count=2, chat_id=ANNA, timeout=WAIT)[-1].params["text"]
    assert "ответьте на сообщение о его разговоре" in hint
    assert not Conversation.objects.exists()


def test_an_expired_a_forged_a_used_or_a_non_members_code_links_nothing(
    post_update, fake_telegram, celery_worker_thread, shop, anna, django_user_model
):
    expired = operators.code_make(user=anna, bot=shop)
    OperatorLinkCode.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    stranger = django_user_model.objects.create_user(username="stranger@example.com")
    foreign = OperatorLinkCode.objects.create(user=stranger, bot=shop, expires_at=timezone.now() + timedelta(minutes=5))
    used = operators.code_make(user=anna, bot=shop)
    OperatorLinkCode.objects.filter(pk=used.pk).update(used_at=timezone.now())

    for number, code in enumerate([expired.code, "forged12", foreign.code, used.code], start=1):
        post_update(start_update(number, ANNA, f"op_{code}"))
        reply = fake_telegram.wait_for("sendMessage", count=number, chat_id=ANNA, timeout=WAIT)[-1].params["text"]
        assert reply.startswith("Код не подошёл")
    assert not OperatorLink.objects.exists()
    assert not Conversation.objects.exists()
    with pytest.raises(operators.NotOperator):
        operators.code_make(user=stranger, bot=shop)


def test_a_widget_visitor_waits_two_operators_hear_one_takes_replies_and_closes(
    post_update, fake_telegram, celery_worker_thread, shop, anna, boris
):
    _link(post_update, fake_telegram, anna, shop, ANNA, 1)
    _link(post_update, fake_telegram, boris, shop, BORIS, 2)
    conversation = _widget_waiting(shop)

    for chat_id in (ANNA, BORIS):
        notice = fake_telegram.wait_for("sendMessage", count=2, chat_id=chat_id, timeout=WAIT)[1].params
        assert notice["text"] == "Ждёт оператора: Мария (виджет на сайте)\n«Можно оплатить по счёту для юрлица?»"
        assert notice["reply_markup"]["inline_keyboard"] == [
            [{"text": "Взять", "callback_data": f"take:{conversation.pk}"}]]

    shown = {chat_id: _notice(chat_id, conversation).result_message_id for chat_id in (ANNA, BORIS)}
    post_update(callback_update(3, ANNA, f"take:{conversation.pk}"))
    for chat_id in (ANNA, BORIS):  # both notices lose «Взять» and say who took it
        edit = fake_telegram.wait_for("editMessageText", chat_id=chat_id, timeout=WAIT)[0].params
        assert str(edit["message_id"]) == str(shown[chat_id]) and "reply_markup" not in edit
        assert edit["text"].endswith("«Можно оплатить по счёту для юрлица?»\n\n<i>Взял(а) Анна.</i>")
    taken = fake_telegram.wait_for("sendMessage", count=3, chat_id=ANNA, timeout=WAIT)[2].params
    assert taken["text"].startswith("Разговор у вас.")
    assert taken["reply_markup"]["inline_keyboard"] == [[
        {"text": "Вернуть боту", "callback_data": f"release:{conversation.pk}"},
        {"text": "Завершить", "callback_data": f"close:{conversation.pk}"},
    ]]
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.OPERATOR and conversation.assigned_to == anna

    post_update(callback_update(4, BORIS, f"take:{conversation.pk}"))
    late = fake_telegram.wait_for("sendMessage", count=3, chat_id=BORIS, timeout=WAIT)[2].params["text"]
    assert late == "Уже взял(а) Анна."
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == anna

    sent = _notice(ANNA, conversation).result_message_id
    assert sent is not None
    post_update(_reply_to(5, ANNA, "Да, выставим счёт: пришлите реквизиты.", sent))
    _wait(lambda: Message.objects.filter(conversation=conversation, role=Message.Role.OPERATOR).exists())
    answer = Message.objects.get(conversation=conversation, role=Message.Role.OPERATOR)
    assert answer.text == "Да, выставим счёт: пришлите реквизиты." and answer.author_id == anna.pk

    post_update(callback_update(6, ANNA, f"close:{conversation.pk}"))
    closed = fake_telegram.wait_for("sendMessage", count=4, chat_id=ANNA, timeout=WAIT)[3].params["text"]
    assert closed == "Разговор завершён."
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.CLOSED and conversation.outcome == "closed_by_operator"


def test_a_telegram_visitor_gets_the_operators_reply_and_release_gives_it_back(
    post_update, knowledge, fake_telegram, celery_worker_thread, shop, anna
):
    _link(post_update, fake_telegram, anna, shop, ANNA, 1)
    post_update(text_update(2, CHAT, "Есть ли у вас парковка для вертолёта на крыше офиса?"))
    fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)
    post_update(callback_update(3, CHAT, "operator"))
    notice = fake_telegram.wait_for("sendMessage", count=2, chat_id=ANNA, timeout=WAIT)[1].params["text"]
    assert notice.startswith("Ждёт оператора: Анна (Telegram)\n«Есть ли у вас парковка")
    conversation = Conversation.objects.get(visitor_id=f"tg:{CHAT}")

    # Replying takes the conversation nobody holds, and the visitor hears it in Telegram.
    sent = _notice(ANNA, conversation).result_message_id
    assert sent is not None
    post_update(_reply_to(4, ANNA, "Парковки нет, но есть площадка рядом.", sent))
    visitor = fake_telegram.wait_for("sendMessage", count=4, chat_id=CHAT, timeout=WAIT)
    assert "Оператор Анна на связи." in visitor[2].params["text"]
    assert visitor[3].params["text"] == "<b>Анна</b>\nПарковки нет, но есть площадка рядом."
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == anna

    post_update(callback_update(5, ANNA, f"release:{conversation.pk}"))
    said = fake_telegram.wait_for("sendMessage", count=3, chat_id=ANNA, timeout=WAIT)[2].params["text"]
    assert said == "Разговор вернулся боту."
    assert Conversation.objects.get(pk=conversation.pk).state == Conversation.State.BOT


def test_an_operator_of_another_bot_moves_nothing(
    post_update, fake_telegram, celery_worker_thread, shop, other_bot, other_owner
):
    fake_telegram.add_bot(OTHER_TOKEN, username="other_shop_bot")
    other = services.telegram_connect(bot=other_bot, token=OTHER_TOKEN)
    client = Client()

    def post_other(update: dict[str, Any]) -> None:
        client.post(f"/messengers/telegram/{other.webhook_key}/", data=update, content_type="application/json",
                    headers={SECRET_HEADER: other.secret})

    code = operators.code_make(user=other_owner, bot=other_bot).code
    post_other(start_update(1, BORIS, f"op_{code}"))
    fake_telegram.wait_for("sendMessage", chat_id=BORIS, timeout=WAIT)
    assert OperatorLink.objects.get(user=other_owner).connection == other
    with pytest.raises(operators.NotOperator):  # not an operator of the shop
        operators.code_make(user=other_owner, bot=shop)

    conversation = _widget_waiting(shop)
    post_other(callback_update(2, BORIS, f"take:{conversation.pk}"))
    refused = fake_telegram.wait_for("sendMessage", count=2, chat_id=BORIS, timeout=WAIT)[1].params["text"]
    assert refused == "Разговор не найден или недоступен вам."
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.WAITING_OPERATOR and conversation.assigned_to is None
    assert not fake_telegram.calls_of("sendMessage", chat_id=ANNA)


def test_the_operator_page_makes_a_code_with_the_deep_link_and_unlinks(shop, anna, connected):
    client = Client()
    client.force_login(anna)
    page = client.get("/messengers/operator/")
    assert page.status_code == 200 and "Связать с Telegram" in page.content.decode()
    made = client.post("/messengers/operator/", {"bot": shop.pk, "action": "code"}).content.decode()
    code = OperatorLinkCode.objects.get(user=anna).code
    assert f"https://t.me/{connected.account_name}?start=op_{code}" in made and f"/start op_{code}" in made
    assert "Код действует 15 минут и подходит один раз." in made

    chat = services.chat_remember(connection=connected, chat_id=str(ANNA), name="Анна", username="")
    OperatorLink.objects.create(user=anna, connection=connected, chat=chat)
    linked = client.get("/messengers/operator/").content.decode()
    assert re.search(r"Связан \d{1,2} [а-я]+ 20\d\d г\. \d{1,2}:\d\d\.", linked)  # «2 декабря»: lower case
    client.post("/messengers/operator/", {"bot": shop.pk, "action": "unlink"})
    assert not OperatorLink.objects.exists()
    Connection.objects.filter(pk=connected.pk).update(status=Connection.Status.DISCONNECTED)
    assert client.post("/messengers/operator/", {"bot": shop.pk, "action": "code"}).status_code == 403


def _linked_directly(user: Any, connection: Connection, chat_id: int) -> None:
    """Linked as /start op_<code> links (the code made and used), without the round trip."""
    chat = services.chat_remember(connection=connection, chat_id=str(chat_id), name=user.first_name, username="")
    assert operators.link_by_code(connection=connection, chat=chat,
                                  code=operators.code_make(user=user, bot=connection.bot).code) is not None


def test_a_wait_reaches_every_operator_together_once_even_through_a_429(
    connected, fake_telegram, celery_worker_thread, shop, django_user_model
):
    team = [_operator(django_user_model, shop, f"op{n}@shop.example", f"Оператор {n}") for n in range(6)]
    chats = [7780000 + n for n in range(6)]
    for user, chat_id in zip(team, chats, strict=True):
        _linked_directly(user, connected, chat_id)
    Membership.objects.filter(user=team[4]).delete()  # left the team: hears nothing more
    fake_telegram.block(chats[5])  # blocked the bot: marked, never retried
    fake_telegram.fail_next("sendMessage", status=429, retry_after=1)  # one of them must wait a second

    conversation = _widget_waiting(shop)

    working = chats[:4]
    for chat_id in working:
        _notice(chat_id, conversation)
    _wait(lambda: Delivery.objects.filter(chat__chat_id=str(chats[5]), status=Delivery.Status.BLOCKED).exists())
    notices = [call for call in fake_telegram.calls_of("sendMessage") if "Ждёт оператора" in call.params["text"]]
    answered = [call for call in notices if call.status == 200]
    assert sorted(int(call.params["chat_id"]) for call in answered) == working  # each once
    assert [call.status for call in notices if call.status != 200].count(429) == 1
    assert not Delivery.objects.filter(chat__chat_id=str(chats[4])).exists()
    assert MessengerChat.objects.get(chat_id=str(chats[5])).blocked_at is not None


def test_telling_the_operators_costs_the_same_queries_for_two_or_six(connected, shop, django_user_model):
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    team = [_operator(django_user_model, shop, f"op{n}@shop.example", f"Оператор {n}") for n in range(6)]
    for n, user in enumerate(team[:2]):
        _linked_directly(user, connected, 7790000 + n)
    costs = []
    for n in (2, 6):
        for k, user in enumerate(team[2:n], start=2):
            if not OperatorLink.objects.filter(user=user).exists():
                _linked_directly(user, connected, 7790000 + k)
        conversation = _widget_waiting(shop)
        note = Message.objects.filter(conversation=conversation, role=Message.Role.SYSTEM).latest("id")
        with CaptureQueriesContext(db) as queries:
            told = operators.waiting_notify(conversation_id=conversation.pk, bot_id=shop.pk, message_id=note.pk)
        assert told == n
        costs.append(len(queries))
    assert costs[0] == costs[1]
    notices = Delivery.objects.filter(key__startswith="w:")  # the signal told them first: still one each
    assert sorted(notices.values_list("chat__chat_id", flat=True)) == [str(7790000 + n) for n in range(6)]


def test_a_take_in_the_inbox_marks_the_notices_and_a_refused_edit_harms_nothing(
    post_update, fake_telegram, celery_worker_thread, shop, anna, boris
):
    from chat import handoff

    _link(post_update, fake_telegram, anna, shop, ANNA, 1)
    _link(post_update, fake_telegram, boris, shop, BORIS, 2)
    conversation = _widget_waiting(shop)
    for chat_id in (ANNA, BORIS):
        _notice(chat_id, conversation)
    fake_telegram.fail_next("editMessageText", status=400, description="Bad Request: message to edit not found")

    handoff.conversation_take(conversation_id=conversation.pk, operator=boris)  # from the web inbox

    edits = fake_telegram.wait_for("editMessageText", count=2, timeout=WAIT)
    assert sorted(call.status for call in edits) == [200, 400]
    assert all(call.params["text"].endswith("<i>Взял(а) Борис.</i>") for call in edits)
    _wait(lambda: Delivery.objects.filter(key__startswith="t:", status=Delivery.Status.FAILED).count() == 1)
    assert Connection.objects.get(bot=shop).status == Connection.Status.ACTIVE  # a courtesy failed, no more
    handoff.conversation_take(conversation_id=conversation.pk, operator=boris)  # their own: nothing again
    time.sleep(0.5)
    assert len(fake_telegram.calls_of("editMessageText")) == 2


def test_an_operator_linked_in_telegram_is_on_hand_for_the_visitor_until_they_say_away(connected, shop, anna):
    """Nobody has the inbox open, but Анна hears of waiting visitors in Telegram: the visitor is told
    an operator will come; once she said «Отошла» in the inbox, the visitor is told nobody is there."""
    from chat import presence

    _linked_directly(anna, connected, 7800001)
    first = _widget_waiting(shop)
    note = Message.objects.filter(conversation=first, role=Message.Role.SYSTEM).latest("id")
    assert note.text.startswith("Оператор подключится")
    presence.presence_away_set(anna, away=True)
    second = chat_services.conversation_open(bot=shop, visitor_id="v-op-2")
    chat_services.conversation_handoff(conversation=second, reason="button")
    note = Message.objects.filter(conversation=second, role=Message.Role.SYSTEM).latest("id")
    assert note.text.startswith("Сейчас никого из операторов нет на месте")
