"""An operator's note in a Telegram visitor's conversation is never sent to the messenger: the
operator's next message arrives there, the note before it does not.

Cross-cutting: inbox/notes.py, chat/handoff.py and the messengers' delivery (messengers/receivers.py,
outgoing.py) together."""

from __future__ import annotations

import pytest

from chat import handoff
from chat.models import Conversation
from inbox import notes
from tests.fakes.telegram_api import text_update
from tests.messengers.conftest import CHAT, WAIT

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "Внутреннее: клиент просил не звонить"


def test_a_note_never_reaches_the_messenger(post_update, knowledge, fake_telegram, celery_worker_thread,
                                            django_user_model):
    post_update(text_update(5, CHAT, "Здравствуйте"))
    fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=WAIT)
    conversation = Conversation.objects.get(visitor_id=f"tg:{CHAT}", channel=Conversation.Channel.TELEGRAM)
    operator = django_user_model.objects.create_user(username="olga@shop.example", first_name="Ольга")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    notes.note_add(conversation=conversation, author=operator, text=NOTE)
    handoff.operator_message_send(conversation_id=conversation.pk, operator=operator, text="Сейчас проверю",
                                  client_msg_id="op-1")
    sent = fake_telegram.wait_for("sendMessage", count=3, chat_id=CHAT, timeout=WAIT)
    assert sent[-1].params["text"].endswith("Сейчас проверю")
    assert not any(NOTE in str(call.params) for call in fake_telegram.calls_of("sendMessage"))
