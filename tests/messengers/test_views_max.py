"""The webhook MAX posts to: the subscription's secret comes in `X-Max-Bot-Api-Secret` and is checked
before anything else (403, nothing stored); a body that is not a MAX update gets 400, one too large
413; an update is stored once under its message's mid (or the callback's id, or the dialog and the
time) however often MAX resends it; updates Spravka does not read, and any for a disconnected bot,
are acknowledged and ignored. No worker here: what is checked is what the view lets in."""

from __future__ import annotations

import json

import pytest

from messengers import services
from messengers.models import Connection, InboundUpdate
from tests.fakes.max_api import bot_started, message_callback, message_created, user
from tests.messengers.conftest import CHAT

pytestmark = pytest.mark.django_db


def test_an_update_is_acknowledged_and_stored_once_however_often_it_comes(post_max, max_connected):
    update = message_created(CHAT, "Сколько стоит доставка?", first_name="Анна", last_name="Петрова")
    first, again = post_max(update), post_max(update)
    assert (first.status_code, first.json(), again.status_code) == (200, {"ok": True}, 200)
    stored = InboundUpdate.objects.get()
    assert stored.event_id == update["message"]["body"]["mid"] and stored.update_id is None
    assert stored.connection_id == max_connected.pk and stored.chat is not None
    assert (stored.chat.chat_id, stored.chat.name) == (str(CHAT), "Анна Петрова")


def test_a_press_and_a_start_are_stored_once_too(post_max):
    press = message_callback(CHAT, "operator")  # a callback_id longer than an event id: stored as its digest
    start = bot_started(CHAT)
    for update in (press, press, start, start):
        assert post_max(update).status_code == 200
    keys = sorted(InboundUpdate.objects.values_list("event_id", flat=True))
    assert len(keys) == 2 and all(len(key) <= 64 for key in keys)
    assert f"started:{CHAT}:{start['timestamp']}" in keys


@pytest.mark.parametrize("secret", ["", "wrong-secret", "x" * 300])
def test_a_forged_update_is_refused_and_nothing_stored(post_max, secret):
    assert post_max(message_created(CHAT, "привет"), secret=secret).status_code == 403
    assert not InboundUpdate.objects.exists()


def test_another_bot_s_secret_does_not_open_this_address(post_max, fake_max):
    from bots.models import Bot

    other = Bot.objects.create(name="Другой", slug="other-max", site_url="https://other.example/")
    fake_max.add_bot("AnotherMaxBotTokenAnotherMaxBotToken", user_id=229000002, username="other_bot")
    theirs = services.max_connect(bot=other, token="AnotherMaxBotTokenAnotherMaxBotToken")
    assert post_max(message_created(CHAT, "привет"), secret=theirs.secret).status_code == 403
    assert post_max(message_created(CHAT, "привет"), key=theirs.webhook_key).status_code == 403
    assert not InboundUpdate.objects.exists()


def _update(**fields) -> bytes:
    return json.dumps(fields).encode()


NOT_UPDATES = [
    b"", b"not json", b"[1, 2]", "\ud800".encode("utf-8", "surrogatepass"),
    _update(timestamp=1),  # no update_type
    _update(update_type="message_created"),  # no timestamp
    _update(update_type="message_created", timestamp=1),  # no message
    _update(update_type="message_created", timestamp=1, message={"body": {"mid": "mid.1"}}),  # no recipient
    _update(update_type="message_created", timestamp=1,
            message={"recipient": {"chat_type": "dialog", "chat_id": "5550001"}, "sender": user(1),
                     "body": {"mid": "mid.1", "text": "x"}}),  # chat_id as text
    _update(update_type="message_created", timestamp=1,
            message={"recipient": {"chat_type": "dialog", "chat_id": 5550001}, "sender": user(1),
                     "body": {"text": "x"}}),  # no mid
    _update(update_type="message_created", timestamp=1,
            message={"recipient": {"chat_type": "dialog", "chat_id": 5550001}, "sender": "Анна",
                     "body": {"mid": "mid.1", "text": "x"}}),  # a sender that is not a user
    _update(update_type="message_callback", timestamp=1, callback={"payload": "operator"}),  # no callback_id
    _update(update_type="bot_started", timestamp=1, user=user(1)),  # no chat_id
    _update(update_type="bot_stopped", timestamp=1, chat_id=5550001),  # no user
]


@pytest.mark.parametrize("body", NOT_UPDATES)
def test_a_body_that_is_not_an_update_gets_400(post_max, body):
    response = post_max(body)
    assert response.status_code == 400
    assert "MAX" in response.json()["error"]
    assert not InboundUpdate.objects.exists()


def test_a_huge_body_is_refused(post_max, settings):
    settings.MESSENGER_MAX_BODY = 1000
    assert post_max(message_created(CHAT, "а" * 2000)).status_code == 413
    assert not InboundUpdate.objects.exists()


def test_a_huge_body_without_the_secret_is_forged_before_it_is_read(post_max, settings):
    settings.MESSENGER_MAX_BODY = 1000
    assert post_max(message_created(CHAT, "а" * 2000), secret="").status_code == 403


def test_an_unknown_address_is_404_and_other_messengers_addresses_are_not_max_s(post_max, max_connected, client):
    assert post_max(message_created(CHAT, "привет"), key="no-such-key").status_code == 404
    for kind in ("telegram", "vk"):
        response = client.post(f"/messengers/{kind}/{max_connected.webhook_key}/", data=b"{}",
                               content_type="application/json")
        assert response.status_code == 404


def test_updates_spravka_does_not_read_are_acknowledged_and_not_stored(post_max):
    group = message_created(-70801090403050, "всем привет", chat_type="chat")
    channel = message_created(CHAT, "пост")
    del channel["message"]["sender"]  # a channel's post has no sender
    another_bot = message_created(CHAT, "я бот", sender=user(229000009) | {"is_bot": True})
    edited = message_created(CHAT, "исправил") | {"update_type": "message_edited"}
    deleted_under = message_callback(CHAT, "operator") | {"message": None}
    for update in (group, channel, another_bot, edited, deleted_under):
        response = post_max(update)
        assert (response.status_code, response.json()) == (200, {"ok": True})
    assert not InboundUpdate.objects.exists()


def test_an_update_for_a_disconnected_bot_is_acknowledged_and_ignored(post_max, max_connected):
    services.connection_disconnect(connection=max_connected)
    assert Connection.objects.get(pk=max_connected.pk).status == Connection.Status.DISCONNECTED
    response = post_max(message_created(CHAT, "привет"))
    assert (response.status_code, response.json()) == (200, {"ok": True})
    assert not InboundUpdate.objects.exists()


def test_only_post_is_accepted(max_connected, client):
    assert client.get(f"/messengers/max/{max_connected.webhook_key}/").status_code == 405
