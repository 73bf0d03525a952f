"""A Telegram visitor's way through the real webhook, a real Celery worker and the widget's own
chain, every call to Telegram made by python-telegram-bot against the fake Bot API: /start greets,
a question is answered with its source as a URL button, «Позвать оператора» hands off, the
operator's reply, release and close reach the chat, what is not text is named in the transcript,
and a resent update is never answered twice."""

from __future__ import annotations

import pytest

from chat import handoff
from chat.models import Conversation, Message
from messengers.models import Delivery, InboundUpdate, MessengerChat
from tests.chat.conftest import DELIVERY_QUESTION
from tests.fakes.telegram_api import callback_update, photo_update, start_update, sticker_update, text_update
from tests.messengers.conftest import CHAT, WAIT, wait_for_delivery, wait_until

pytestmark = pytest.mark.django_db(transaction=True)



def _conversation() -> Conversation:
    return Conversation.objects.get(visitor_id=f"tg:{CHAT}", channel=Conversation.Channel.TELEGRAM)


def test_start_greets(post_update, fake_telegram, celery_worker_thread):
    post_update(start_update(1, CHAT))
    sent = fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)
    assert sent[0].params["text"] == "Здравствуйте! Чем могу помочь?"


def test_a_question_is_answered_from_the_site_with_its_source_button(
    post_update, knowledge, fake_telegram, celery_worker_thread
):
    post_update(text_update(2, CHAT, DELIVERY_QUESTION, first_name="Анна", last_name="Петрова"))

    reply = fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)[0].params
    assert "300 ₽" in reply["text"] and reply["parse_mode"] == "HTML"
    buttons = [row[0] for row in reply["reply_markup"]["inline_keyboard"]]
    assert {"text": "Доставка", "url": "https://shop.example/delivery"} in buttons
    assert fake_telegram.calls_of("sendChatAction", chat_id=CHAT)  # «печатает…» while it was made
    conversation = _conversation()
    assert conversation.visitor_name == "Анна Петрова"
    assert [m.role for m in conversation.messages.order_by("id")] == ["visitor", "bot"]
    wait_until(lambda: InboundUpdate.objects.get(update_id=2).status == InboundUpdate.Status.HANDLED)


def test_a_resent_update_is_answered_once(post_update, knowledge, fake_telegram, celery_worker_thread):
    update = text_update(3, CHAT, DELIVERY_QUESTION)
    post_update(update)
    fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)
    post_update(update)  # Telegram did not hear our 200 and sends it again
    post_update(text_update(4, CHAT, "А возврат?"))
    fake_telegram.wait_for("sendMessage", count=2, chat_id=CHAT, timeout=WAIT)
    assert len(fake_telegram.sent_texts(CHAT)) == 2
    assert Message.objects.filter(role="visitor").count() == 2


def test_the_operator_button_the_operator_and_back_to_the_bot(
    post_update, knowledge, fake_telegram, celery_worker_thread, django_user_model, owner_on_hand
):
    post_update(text_update(5, CHAT, "Есть ли у вас парковка для вертолёта на крыше офиса?"))
    no_answer = fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)[0].params
    operator_button = no_answer["reply_markup"]["inline_keyboard"][-1][0]
    assert operator_button == {"text": "Позвать оператора", "callback_data": "operator"}

    post_update(callback_update(6, CHAT, "operator"))
    note = fake_telegram.wait_for("sendMessage", count=2, chat_id=CHAT, timeout=WAIT)[1].params
    assert "Оператор подключится" in note["text"]
    assert fake_telegram.calls_of("answerCallbackQuery")
    conversation = _conversation()
    assert conversation.state == Conversation.State.WAITING_OPERATOR

    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator,
                                  text="Парковки нет, но <есть> площадка рядом & бесплатно.", client_msg_id="op-1")
    sent = fake_telegram.wait_for("sendMessage", count=4, chat_id=CHAT, timeout=WAIT)
    assert "Оператор Ольга на связи." in sent[2].params["text"]
    assert sent[3].params["text"] == "<b>Ольга</b>\nПарковки нет, но &lt;есть&gt; площадка рядом &amp; бесплатно."

    post_update(text_update(7, CHAT, "Спасибо, а где она?"))  # the bot stays silent: the operator has it
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    sent = fake_telegram.wait_for("sendMessage", count=5, chat_id=CHAT, timeout=WAIT)
    assert Conversation.objects.get(pk=conversation.pk).state == Conversation.State.BOT
    assert not any("Спасибо, а где она" in call.params["text"] for call in sent)  # a visitor's words never echo


def test_what_is_not_text_is_named_in_the_transcript(post_update, fake_telegram, celery_worker_thread):
    post_update(photo_update(8, CHAT))
    fake_telegram.wait_for("sendMessage", chat_id=CHAT)  # one after the other: two workers take them
    post_update(sticker_update(9, CHAT))
    sent = fake_telegram.wait_for("sendMessage", count=2, chat_id=CHAT, timeout=WAIT)
    assert all("понимаю только текст" in call.params["text"] for call in sent)
    texts = list(_conversation().messages.filter(role="visitor").order_by("id").values_list("text", flat=True))
    assert texts == ["[фото]", "[стикер]"]


def test_a_user_who_blocked_the_bot_is_marked_and_not_retried(
    post_update, knowledge, fake_telegram, celery_worker_thread
):
    fake_telegram.block(CHAT)
    post_update(text_update(10, CHAT, DELIVERY_QUESTION))
    fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.BLOCKED)
    assert delivery.attempts == 1 and delivery.response_status == 403
    assert MessengerChat.objects.get(chat_id=str(CHAT)).blocked_at is not None
    assert len(fake_telegram.calls_of("sendMessage", chat_id=CHAT)) == 1


def test_a_429_is_waited_out_and_the_reply_arrives_once(post_update, knowledge, fake_telegram, celery_worker_thread):
    fake_telegram.fail_next("sendMessage", status=429, retry_after=1)
    post_update(text_update(11, CHAT, DELIVERY_QUESTION))
    calls = fake_telegram.wait_for("sendMessage", count=2, chat_id=CHAT, timeout=WAIT)
    assert [call.status for call in calls] == [429, 200]
    assert calls[1].at - calls[0].at >= 0.9  # Telegram's retry_after was honoured
    assert len(fake_telegram.sent_texts(CHAT)) == 1
