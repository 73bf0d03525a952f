"""A VK visitor's way through the real webhook, a real Celery worker and the widget's own chain, every
call to VK made by messengers/vk.py against the fake VK API: «Начать» greets, a first message is
answered with its source as a link button (the user's name asked once with users.get), «Позвать
оператора» (a callback button) hands off, the operator's reply and «Вернуть боту» reach the chat
through messages.send, what is not text is named in the transcript, a phone is typed where VK has no
button to share it, blocked users and VK's rate errors are handled, and every message carries a
random_id of its own."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from bots.services import opening_hours_set
from chat import handoff
from chat.models import Conversation, Lead, Message
from messengers.models import Delivery, InboundUpdate, MessengerChat
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION
from tests.fakes.vk_api import (
    document,
    message_allow,
    message_deny,
    message_event,
    message_new,
    photo,
    start_event,
    sticker,
    voice,
)
from tests.messengers.conftest import CHAT, VK_SECRET, WAIT, wait_for_delivery, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

POLICY = "https://shop.example/privacy/"
OPERATOR_BUTTON = {"action": {"type": "callback", "label": "Позвать оператора", "payload": '{"cmd":"operator"}'}}


def new(text: str, **more):
    return message_new(CHAT, text, secret=VK_SECRET, **more)


def _conversation() -> Conversation:
    return Conversation.objects.get(visitor_id=f"vk:{CHAT}", channel=Conversation.Channel.VK)


def test_start_greets(post_vk, fake_vk, celery_worker_thread):
    post_vk(start_event(CHAT, secret=VK_SECRET))
    sent = fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)[0].params
    assert sent["message"] == "Здравствуйте! Чем могу помочь?"
    assert sent["random_id"].isdigit() and "keyboard" not in sent


def test_a_first_message_is_answered_from_the_site_with_its_source_button(
    post_vk, knowledge, fake_vk, celery_worker_thread
):
    fake_vk.add_user(CHAT, "Анна", "Петрова", "anna_p")
    event = new(DELIVERY_QUESTION)
    assert post_vk(event).content == b"ok"

    reply = fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)[0].params
    assert "300 ₽" in reply["message"]
    assert reply["dont_parse_links"] == "1" and reply["disable_mentions"] == "1"
    assert reply["keyboard"]["inline"] is True
    buttons = [row[0]["action"] for row in reply["keyboard"]["buttons"]]
    assert {"type": "open_link", "link": "https://shop.example/delivery", "label": "Доставка"} in buttons
    assert fake_vk.calls_of("messages.setActivity", peer_id=CHAT)  # «печатает…» while it was made
    conversation = _conversation()
    assert conversation.visitor_name == "Анна Петрова"
    assert [m.role for m in conversation.messages.order_by("id")] == ["visitor", "bot"]
    chat = MessengerChat.objects.get(chat_id=str(CHAT))
    assert (chat.name, chat.username) == ("Анна Петрова", "anna_p")
    wait_until(lambda: InboundUpdate.objects.get(event_id=event["event_id"]).status == InboundUpdate.Status.HANDLED)

    post_vk(new("А возврат?"))
    fake_vk.wait_for("messages.send", count=2, peer_id=CHAT, timeout=WAIT)
    assert len(fake_vk.calls_of("users.get")) == 1  # the name is asked once per chat


def test_a_resent_event_is_answered_once(post_vk, knowledge, fake_vk, celery_worker_thread):
    event = new(DELIVERY_QUESTION)
    post_vk(event)
    fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)
    post_vk(event)  # VK did not hear our ok and sends it again
    post_vk(new("А возврат?"))
    fake_vk.wait_for("messages.send", count=2, peer_id=CHAT, timeout=WAIT)
    assert len(fake_vk.sent_texts(CHAT)) == 2
    assert Message.objects.filter(role="visitor").count() == 2


def test_the_operator_button_the_operator_and_back_to_the_bot(
    post_vk, knowledge, fake_vk, celery_worker_thread, django_user_model, owner_on_hand
):
    post_vk(new(UNKNOWN_QUESTION))
    no_answer = fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)[0].params
    assert no_answer["keyboard"]["buttons"][-1] == [OPERATOR_BUTTON]

    press = message_event(CHAT, {"cmd": "operator"}, secret=VK_SECRET)
    assert post_vk(press).content == b"ok"
    note = fake_vk.wait_for("messages.send", count=2, peer_id=CHAT, timeout=WAIT)[1].params
    assert "Оператор подключится" in note["message"]
    answered = fake_vk.wait_for("messages.sendMessageEventAnswer", timeout=WAIT)[0].params
    assert answered == {"event_id": press["object"]["event_id"], "user_id": str(CHAT), "peer_id": str(CHAT),
                        "v": "5.199"}
    conversation = _conversation()
    assert conversation.state == Conversation.State.WAITING_OPERATOR

    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator,
                                  text="Парковки нет, но <есть> площадка рядом & бесплатно.", client_msg_id="op-1")
    sent = fake_vk.wait_for("messages.send", count=4, peer_id=CHAT, timeout=WAIT)
    assert "Оператор Ольга на связи." in sent[2].params["message"]
    assert sent[3].params["message"] == "Ольга:\nПарковки нет, но <есть> площадка рядом & бесплатно."  # plain text

    post_vk(new("Спасибо, а где она?"))  # the bot stays silent: the operator has it
    handoff.conversation_release(conversation_id=conversation.pk, operator=operator)
    sent = fake_vk.wait_for("messages.send", count=5, peer_id=CHAT, timeout=WAIT)
    assert Conversation.objects.get(pk=conversation.pk).state == Conversation.State.BOT
    assert not any("Спасибо, а где она" in call.params["message"] for call in sent)  # a visitor's words never echo

    post_vk(new("А сколько стоит доставка?"))  # back with the bot: it answers again
    fake_vk.wait_for("messages.send", count=6, peer_id=CHAT, timeout=WAIT)
    wait_until(lambda: conversation.messages.order_by("-id").values_list("role", flat=True).first() == "bot")

    random_ids = [call.params["random_id"] for call in fake_vk.calls_of("messages.send", peer_id=CHAT)]
    assert len(set(random_ids)) == len(random_ids) == 6  # one of its own per message


def test_what_is_not_text_is_named_in_the_transcript(post_vk, fake_vk, celery_worker_thread):
    for number, attachment in enumerate((photo(), sticker(), voice(), document()), start=1):
        post_vk(new("", attachments=[attachment]))
        sent = fake_vk.wait_for("messages.send", count=number, peer_id=CHAT, timeout=WAIT)
    assert all("понимаю только текст" in call.params["message"] for call in sent)
    texts = list(_conversation().messages.filter(role="visitor").order_by("id").values_list("text", flat=True))
    assert texts == ["[фото]", "[стикер]", "[голосовое сообщение]", "[файл]"]


def test_a_phone_is_typed_where_vk_has_no_button_to_share_it(post_vk, shop, knowledge, fake_vk, celery_worker_thread):
    shop.privacy_policy_url = POLICY
    shop.save(update_fields=["privacy_policy_url"])
    opening_hours_set(bot=shop, rows=[(day, dt.time(0, 0), dt.time(0, 1)) for day in range(7)])
    fake_vk.add_user(CHAT, "Анна")

    post_vk(new(UNKNOWN_QUESTION))
    offer = fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)[0].params
    assert "напишите в ответ номер телефона" in offer["message"]
    assert "согласие на обработку" in offer["message"] and POLICY in offer["message"]

    post_vk(new("8 (916) 123-45-67"))
    thanks = fake_vk.wait_for("messages.send", count=2, peer_id=CHAT, timeout=WAIT)[1].params
    assert thanks["message"] == "Спасибо, Анна! Мы свяжемся с вами: +79161234567."
    lead = Lead.objects.get()
    assert (lead.phone, lead.name, lead.consent_policy_url) == ("+79161234567", "Анна", POLICY)


def test_a_user_who_blocked_the_community_is_marked_and_not_retried(
    post_vk, knowledge, fake_vk, celery_worker_thread
):
    fake_vk.block(CHAT)
    post_vk(new(DELIVERY_QUESTION))
    fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.BLOCKED)
    assert delivery.attempts == 1 and delivery.response_status == 403 and "901" in delivery.error
    assert MessengerChat.objects.get(chat_id=str(CHAT)).blocked_at is not None
    time.sleep(0.3)  # a retry would have come by now (MESSENGER_RETRY_BASE is 0.05)
    assert len(fake_vk.calls_of("messages.send", peer_id=CHAT)) == 1


def test_privacy_settings_902_block_too(post_vk, fake_vk, celery_worker_thread):
    fake_vk.fail_next("messages.send", code=902)
    post_vk(start_event(CHAT, secret=VK_SECRET))
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.BLOCKED)
    assert delivery.attempts == 1 and "902" in delivery.error


def test_forbidding_and_allowing_the_community_s_messages(post_vk, fake_vk, celery_worker_thread):
    post_vk(message_deny(CHAT, secret=VK_SECRET))
    wait_until(lambda: MessengerChat.objects.filter(chat_id=str(CHAT), blocked_at__isnull=False).exists())
    post_vk(message_allow(CHAT, secret=VK_SECRET))
    wait_until(lambda: MessengerChat.objects.get(chat_id=str(CHAT)).blocked_at is None)
    assert fake_vk.calls_of("messages.send") == []


@pytest.mark.parametrize("code", [6, 9, 10])
def test_vk_s_rate_errors_are_retried_and_the_reply_arrives_once(post_vk, fake_vk, celery_worker_thread, code):
    fake_vk.fail_next("messages.send", code=code, times=2)
    post_vk(start_event(CHAT, secret=VK_SECRET))
    calls = fake_vk.wait_for("messages.send", count=3, peer_id=CHAT, timeout=WAIT)
    assert [call.error for call in calls] == [code, code, None]
    assert calls[2].at - calls[1].at >= 0.09  # the backoff doubles: 0.05, then 0.1 seconds
    assert len({call.params["random_id"] for call in calls}) == 1  # the same message to VK each time
    assert fake_vk.sent_texts(CHAT) == ["Здравствуйте! Чем могу помочь?"]
    delivery = wait_for_delivery(lambda d: d.status == Delivery.Status.DELIVERED)
    assert delivery.attempts == 3


def test_a_reply_whose_first_attempt_arrived_is_not_shown_twice(post_vk, fake_vk, celery_worker_thread, settings):
    settings.MESSENGER_TIMEOUT = 0.3
    fake_vk.delay(0.6)  # VK got the message but our client gave up before the answer
    post_vk(start_event(CHAT, secret=VK_SECRET))
    fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)
    fake_vk.delay(0)
    calls = fake_vk.wait_for("messages.send", count=2, peer_id=CHAT, timeout=WAIT)
    assert calls[1].duplicate and calls[0].params["random_id"] == calls[1].params["random_id"]
    assert fake_vk.sent_texts(CHAT) == ["Здравствуйте! Чем могу помочь?"]


def test_mentions_in_a_reply_stay_text(post_vk, fake_vk, celery_worker_thread, django_user_model):
    post_vk(new("Позовите оператора, пожалуйста"))
    fake_vk.wait_for("messages.send", peer_id=CHAT, timeout=WAIT)
    conversation = _conversation()
    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    wait_until(lambda: any("на связи" in text for text in fake_vk.sent_texts(CHAT)))
    before = len(fake_vk.sent(CHAT))
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, client_msg_id="op-2",
                                  text="Пишите [id1|Павлу] или @durov, почта olga@shop.example")
    sent = fake_vk.wait_for("messages.send", count=before + 1, peer_id=CHAT, timeout=WAIT)[-1].params["message"]
    assert sent == "Ольга:\nПишите [\u2060id1|Павлу] или @\u2060durov, почта olga@shop.example"
