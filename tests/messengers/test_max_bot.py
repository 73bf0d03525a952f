"""A MAX visitor's way through the real webhook, a real Celery worker and the widget's own chain, every
call to MAX made by messengers/max_bot.py against the fake MAX Bot API: «Начать» greets, a question is
answered with its source page as a link button, «Позвать оператора» (a callback button) hands off,
the operator's reply and «Вернуть боту» reach the dialog through POST /messages, what is not text is
named in the transcript, a phone is shared with MAX's own button under the consent text, a user who
stopped the bot is marked and not retried, and MAX's rate limit and outages are waited out with the
reply sent once."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from bots.services import opening_hours_set
from chat import handoff
from chat.models import Conversation, Lead, Message
from messengers.models import Connection, Delivery, InboundUpdate, MessengerChat
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION
from tests.fakes.max_api import (
    audio,
    bot_started,
    bot_stopped,
    contact,
    document,
    image,
    message_callback,
    message_created,
    sticker,
)
from tests.messengers.conftest import CHAT, WAIT, wait_for_delivery, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

SEND = "POST /messages"
GREETING = "Здравствуйте! Чем могу помочь?"
POLICY = "https://shop.example/privacy/"
OPERATOR_BUTTON = {"type": "callback", "text": "Позвать оператора", "payload": "operator"}


def says(text: str | None, **more):
    return message_created(CHAT, text, first_name="Анна", last_name="Петрова", username="anna_p", **more)


def buttons(call) -> list[list[dict]]:
    (keyboard,) = call.body["attachments"]
    assert keyboard["type"] == "inline_keyboard"
    return keyboard["payload"]["buttons"]


def _conversation() -> Conversation:
    return Conversation.objects.get(visitor_id=f"max:{CHAT}", channel=Conversation.Channel.MAX)


def test_start_greets(post_max, fake_max, celery_worker_thread):
    post_max(bot_started(CHAT))
    greeting = fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)[0]
    assert greeting.body == {"text": GREETING, "format": "html"}
    assert greeting.query == {"chat_id": str(CHAT), "disable_link_preview": "true"}
    assert greeting.token == fake_max.calls_of("GET /me")[0].token  # the bot's token, in the header


def test_a_question_is_answered_from_the_site_with_its_source_button(
    post_max, knowledge, fake_max, celery_worker_thread
):
    update = says(DELIVERY_QUESTION)
    assert post_max(update).json() == {"ok": True}

    reply = fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)[0]
    assert "300 ₽" in reply.body["text"] and reply.body["format"] == "html"
    assert [{"type": "link", "text": "Доставка", "url": "https://shop.example/delivery"}] in buttons(reply)
    typing = fake_max.calls_of("POST /chats/{chat_id}/actions", chat_id=CHAT)  # «печатает…» while it was made
    assert [call.body for call in typing] == [{"action": "typing_on"}]
    conversation = _conversation()
    assert conversation.visitor_name == "Анна Петрова"
    assert [m.role for m in conversation.messages.order_by("id")] == ["visitor", "bot"]
    chat = MessengerChat.objects.get(chat_id=str(CHAT))
    assert (chat.name, chat.username) == ("Анна Петрова", "anna_p")
    wait_until(lambda: InboundUpdate.objects.get(event_id=update["message"]["body"]["mid"]).status
               == InboundUpdate.Status.HANDLED)

    post_max(update)  # MAX did not hear our 200 and sends it again
    post_max(says("А возврат?"))
    fake_max.wait_for(SEND, count=2, chat_id=CHAT, timeout=WAIT)
    wait_until(lambda: not InboundUpdate.objects.filter(status=InboundUpdate.Status.RECEIVED).exists())
    assert len(fake_max.sent_texts(CHAT)) == 2
    assert Message.objects.filter(role="visitor").count() == 2


def test_the_operator_button_the_operator_and_back_to_the_bot(
    post_max, knowledge, fake_max, celery_worker_thread, django_user_model, owner_on_hand
):
    post_max(says(UNKNOWN_QUESTION))
    no_answer = fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)[0]
    assert "точного ответа" in no_answer.body["text"]
    assert buttons(no_answer)[-1] == [OPERATOR_BUTTON]

    press = message_callback(CHAT, "operator")
    assert post_max(press).json() == {"ok": True}
    note = fake_max.wait_for(SEND, count=2, chat_id=CHAT, timeout=WAIT)[1]
    assert note.body["text"].startswith("<i>Оператор подключится")
    answered = fake_max.wait_for("POST /answers", timeout=WAIT)[0]
    assert answered.query == {"callback_id": press["callback"]["callback_id"]} and answered.body == {}
    conversation = _conversation()
    assert conversation.state == Conversation.State.WAITING_OPERATOR
    assert conversation.visitor_name == "Анна Петрова"

    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator,
                                  text="Парковки нет, но <есть> площадка рядом & бесплатно.", client_msg_id="op-1")
    sent = fake_max.wait_for(SEND, count=4, chat_id=CHAT, timeout=WAIT)
    assert sent[2].body["text"] == "<i>Оператор Ольга на связи.</i>"
    assert sent[3].body["text"] == "<b>Ольга</b>\nПарковки нет, но &lt;есть&gt; площадка рядом &amp; бесплатно."

    post_max(says("Спасибо, а где она?"))  # the bot stays silent: the operator has it
    wait_until(lambda: conversation.messages.filter(role="visitor", text="Спасибо, а где она?").exists())
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    # Back with the bot, which answers the question left unanswered while the operator had it.
    sent = fake_max.wait_for(SEND, count=6, chat_id=CHAT, timeout=WAIT)
    assert "вернул разговор" in sent[4].body["text"]
    assert "точного ответа" in sent[5].body["text"]  # «а где она?»: the site does not say
    assert Conversation.objects.get(pk=conversation.pk).state == Conversation.State.BOT
    assert not any("Спасибо, а где она" in call.body["text"] for call in sent)  # a visitor's words never echo

    post_max(says(DELIVERY_QUESTION))  # and answers the next question as ever
    again = fake_max.wait_for(SEND, count=7, chat_id=CHAT, timeout=WAIT)[6]
    assert "300 ₽" in again.body["text"]
    assert all(call.ok for call in fake_max.calls_of(SEND))


def test_a_long_operator_reply_is_cut_under_max_s_limit_with_its_markup(
    post_max, fake_max, celery_worker_thread, django_user_model
):
    post_max(says("Позовите оператора, пожалуйста"))
    fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)
    conversation = _conversation()
    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    wait_until(lambda: any("на связи" in text for text in fake_max.sent_texts(CHAT)))
    before = len(fake_max.sent(CHAT))
    text = "Т&К " * 500  # under the 2,000 characters an operator may send, 4,000 once escaped
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text=text,
                                  client_msg_id="op-long")
    wait_until(lambda: not Delivery.objects.filter(status__in=["pending", "sending"]).exists())
    parts = fake_max.sent_texts(CHAT)[before:]
    assert len(parts) == 2 and all(len(part) <= 4000 for part in parts)
    assert all(call.ok for call in fake_max.calls_of(SEND))  # none refused as too long
    assert parts[0].startswith("<b>Ольга</b>\nТ&amp;К Т&amp;К") and parts[1].startswith("Т&amp;К")
    assert "".join(parts).count("Т&amp;К") == 500  # nothing lost at the cut


def test_what_is_not_text_is_named_in_the_transcript(post_max, fake_max, celery_worker_thread):
    for number, attachment in enumerate((image(), sticker(), audio(), document()), start=1):
        post_max(says(None, attachments=[attachment]))
        sent = fake_max.wait_for(SEND, count=number, chat_id=CHAT, timeout=WAIT)
    assert all("понимаю только текст" in call.body["text"] for call in sent)
    texts = list(_conversation().messages.filter(role="visitor").order_by("id").values_list("text", flat=True))
    assert texts == ["[фото]", "[стикер]", "[голосовое сообщение]", "[файл]"]


def test_a_phone_is_shared_with_max_s_contact_button_under_the_consent(
    post_max, shop, knowledge, fake_max, celery_worker_thread
):
    shop.privacy_policy_url = POLICY
    shop.save(update_fields=["privacy_policy_url"])
    opening_hours_set(bot=shop, rows=[(day, dt.time(0, 0), dt.time(0, 1)) for day in range(7)])

    post_max(says(UNKNOWN_QUESTION))
    offer = fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)[0]
    assert "согласие на обработку" in offer.body["text"] and POLICY in offer.body["text"]
    assert [{"type": "request_contact", "text": "Поделиться номером"}] in buttons(offer)
    assert "напишите в ответ номер" not in offer.body["text"]  # MAX has the button: nothing to type

    post_max(says(None, attachments=[contact("+79161234567")]))
    thanks = fake_max.wait_for(SEND, count=2, chat_id=CHAT, timeout=WAIT)[1]
    assert thanks.body["text"] == "<i>Спасибо, Анна Петрова! Мы свяжемся с вами: +79161234567.</i>"
    lead = Lead.objects.get()
    assert (lead.phone, lead.name, lead.consent_policy_url) == ("+79161234567", "Анна Петрова", POLICY)


def test_a_user_who_stopped_the_bot_is_marked_and_not_retried(post_max, knowledge, fake_max, celery_worker_thread):
    fake_max.block(CHAT)
    post_max(says(DELIVERY_QUESTION))
    fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.BLOCKED)
    assert delivery.attempts == 1 and delivery.response_status == 403 and "chat.denied" in delivery.error
    assert MessengerChat.objects.get(chat_id=str(CHAT)).blocked_at is not None
    time.sleep(0.3)  # a retry would have come by now (MESSENGER_RETRY_BASE is 0.05)
    assert len(fake_max.calls_of(SEND, chat_id=CHAT)) == 1


def test_stopping_and_starting_the_bot_again(post_max, fake_max, celery_worker_thread):
    post_max(bot_stopped(CHAT))
    wait_until(lambda: MessengerChat.objects.filter(chat_id=str(CHAT), blocked_at__isnull=False).exists())
    assert fake_max.calls_of(SEND) == []
    post_max(bot_started(CHAT))
    assert fake_max.wait_for(SEND, chat_id=CHAT, timeout=WAIT)[0].body["text"] == GREETING
    assert MessengerChat.objects.get(chat_id=str(CHAT)).blocked_at is None


def test_a_429_is_waited_out_and_the_reply_arrives_once(post_max, fake_max, celery_worker_thread):
    fake_max.fail_next(SEND, status=429, retry_after=1)
    post_max(bot_started(CHAT))
    calls = fake_max.wait_for(SEND, count=2, chat_id=CHAT, timeout=WAIT)
    assert [call.status for call in calls] == [429, 200]
    assert calls[1].at - calls[0].at >= 0.9  # MAX's Retry-After was honoured
    assert fake_max.sent_texts(CHAT) == [GREETING]


def test_a_500_then_success_sends_the_reply_once(post_max, fake_max, celery_worker_thread):
    fake_max.fail_next(SEND, status=500, times=2)
    post_max(bot_started(CHAT))
    calls = fake_max.wait_for(SEND, count=3, chat_id=CHAT, timeout=WAIT)
    assert [call.status for call in calls] == [500, 500, 200]
    assert fake_max.sent_texts(CHAT) == [GREETING]
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.DELIVERED)
    assert delivery.attempts == 3 and delivery.method == "messages"


def test_a_token_max_no_longer_takes_marks_the_connection(post_max, max_connected, fake_max, celery_worker_thread):
    fake_max.fail_next(SEND, status=401, code="verify.token")
    post_max(bot_started(CHAT))
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.FAILED)
    assert delivery.attempts == 1 and delivery.response_status == 401
    wait_until(lambda: Connection.objects.get(pk=max_connected.pk).status == Connection.Status.FAILING)
    assert "MAX больше не принимает токен" in Connection.objects.get(pk=max_connected.pk).error_shown
