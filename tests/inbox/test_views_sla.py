"""The bot's promised first reply («первый ответ оператора в течение N минут»): set through the bots'
service, and a waiting conversation past it is marked in the inbox in words (the row and the queue's
heading), not by colour alone; the operator socket's frames carry the promise for the live page."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from bots.services import bot_operators_set
from chat import services
from chat.frames import conversation_json
from chat.models import Conversation

pytestmark = pytest.mark.django_db


def _waiting(bot, visitor_id, minutes_ago):
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id)
    services.conversation_handoff(conversation=conversation, reason="button")
    since = timezone.now() - timedelta(minutes=minutes_ago)
    Conversation.objects.filter(pk=conversation.pk).update(waiting_since=since)
    return conversation


def test_a_wait_past_the_promise_is_said_in_words(client, shop, operator):
    bot_operators_set(bot=shop, sla_minutes=5, csat_after_bot=False)
    late = _waiting(shop, "v_late", 12)
    fresh = _waiting(shop, "v_fresh", 1)
    client.force_login(operator)
    page = client.get("/inbox/").content.decode()
    late_row = page.split(f'data-id="{late.pk}"')[0].rsplit("<a ", 1)[1]
    fresh_row = page.split(f'data-id="{fresh.pk}"')[0].rsplit("<a ", 1)[1]
    assert 'data-late="true"' in late_row and 'data-late="true"' not in fresh_row
    assert "дольше срока (5 мин)" in page
    assert 'id="late-count">дольше срока: 1<' in page


def test_no_promise_marks_nothing(client, shop, operator):
    bot_operators_set(bot=shop, sla_minutes=0, csat_after_bot=False)
    _waiting(shop, "v_late", 600)
    client.force_login(operator)
    page = client.get("/inbox/").content.decode()
    assert 'data-late="true"' not in page
    assert 'id="late-count" hidden' in page


def test_the_promise_reads_in_english(client, shop, operator):
    _waiting(shop, "v_late", 12)  # the default promise: 5 minutes
    client.force_login(operator)
    page = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "past the promised time (5 min)" in page and "past the promised time: 1" in page


def test_the_conversation_frame_carries_the_promise(shop):
    bot_operators_set(bot=shop, sla_minutes=7, csat_after_bot=False)
    conversation = Conversation.objects.select_related("bot").get(pk=_waiting(shop, "v", 1).pk)
    assert conversation_json(conversation)["bot"]["sla_minutes"] == 7


@pytest.mark.parametrize("bad", [-1, 1441, "5", 2.5, True])
def test_a_bad_promise_is_refused_and_nothing_changes(shop, bad):
    with pytest.raises(ValidationError, match="от 0 до 1440"):
        bot_operators_set(bot=shop, sla_minutes=bad, csat_after_bot=True)
    shop.refresh_from_db()
    assert shop.operator_sla_minutes == 5 and shop.csat_after_bot is False
