"""Nobody comes: an e-mail to the bot's operators once a conversation waits longer than the bot
allows, sent by a real Celery worker to a real local SMTP server, once per wait."""

import datetime as dt
import time

import pytest
from django.utils import timezone

from chat import services
from chat.models import Conversation
from inbox import tasks

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_for(bot, minutes, visitor_id="v_wait"):
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id, page_url="https://shop.example/pay/")
    services.message_receive(conversation=conversation, text="Не проходит оплата картой", client_msg_id="c1")
    services.conversation_handoff(conversation=conversation, reason="button")
    since = timezone.now() - dt.timedelta(minutes=minutes)
    Conversation.objects.filter(pk=conversation.pk).update(waiting_since=since)
    return conversation


def test_the_operators_get_one_email_about_a_long_wait(shop, operator, smtp_server, celery_worker_thread):
    conversation = _waiting_for(shop, minutes=3)  # the bot's default alert time is 2 minutes
    tasks.alert_waiting.delay()
    (message,) = smtp_server.wait_for(1)
    assert message["X-Envelope-To"] == "anna@shop.example"
    assert "ждёт оператора 3 мин" in message["Subject"]
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "Не проходит оплата картой" in text and f"/inbox/c/{conversation.pk}/" in text
    assert "https://shop.example/pay/" in html and "Ответить посетителю" in html
    tasks.alert_waiting.delay()  # the next beat run: no second e-mail for the same wait
    time.sleep(1.5)
    assert len(smtp_server.messages) == 1


def test_a_short_wait_sends_nothing_and_without_operators_the_owner_is_told(shop, owner, smtp_server):
    _waiting_for(shop, minutes=1, visitor_id="v_short")
    assert tasks.alert_waiting() == 0
    _waiting_for(shop, minutes=5, visitor_id="v_long")
    assert tasks.alert_waiting() == 1
    (message,) = smtp_server.wait_for(1)
    assert message["X-Envelope-To"] == "owner@shop.example"


def test_a_broken_mail_server_is_retried_on_the_next_run(shop, operator, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1  # nothing listens there
    conversation = _waiting_for(shop, minutes=3)
    assert tasks.alert_waiting() == 0
    conversation.refresh_from_db()
    assert conversation.alerted_at is None
