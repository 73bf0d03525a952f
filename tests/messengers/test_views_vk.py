"""The webhook VK's Callback API posts to: the handshake is answered with the confirmation string,
every accepted event with plain `ok`; a forged event (wrong or missing `secret` in the body) gets 403
and stores nothing, a body that is not an event gets 400, an event is stored once per event_id
however often it is resent, and one for a disconnected community is acknowledged and ignored. No
worker here: what is checked is what the view lets in."""

from __future__ import annotations

import json

import pytest

from messengers import services
from messengers.models import InboundUpdate
from tests.fakes.vk_api import confirmation_event, message_new
from tests.messengers.conftest import CHAT, VK_CONFIRMATION, VK_SECRET

pytestmark = pytest.mark.django_db


def test_the_handshake_is_answered_with_the_confirmation_string(post_vk):
    response = post_vk(confirmation_event(secret=VK_SECRET))
    assert response.status_code == 200
    assert response.content.decode() == VK_CONFIRMATION  # plain text, not JSON
    assert response["content-type"].startswith("text/plain")
    assert not InboundUpdate.objects.exists()


def test_an_event_is_acknowledged_with_ok_and_stored_once_however_often_it_comes(post_vk, vk_connected):
    event = message_new(CHAT, "Сколько стоит доставка?", secret=VK_SECRET)
    first, again = post_vk(event), post_vk(event)
    assert (first.status_code, first.content, again.status_code, again.content) == (200, b"ok", 200, b"ok")
    stored = InboundUpdate.objects.get()
    assert stored.event_id == event["event_id"] and stored.update_id is None
    assert stored.connection_id == vk_connected.pk
    assert "secret" not in stored.payload  # the secret stays with the connection


@pytest.mark.parametrize("secret", ["", "wrong-secret", VK_SECRET + "x", VK_SECRET.lower(), "x" * 300])
def test_a_forged_event_is_refused_and_nothing_stored(post_vk, secret):
    assert post_vk(message_new(CHAT, "привет", secret=secret)).status_code == 403
    assert post_vk(confirmation_event(secret=secret)).status_code == 403  # the handshake is not told either
    assert not InboundUpdate.objects.exists()


def test_a_secret_that_is_not_a_string_is_forged(post_vk):
    event = message_new(CHAT, "привет", secret=VK_SECRET) | {"secret": 12345}
    assert post_vk(event).status_code == 403


def _with_secret(body: dict) -> bytes:
    return json.dumps(body | {"secret": VK_SECRET}).encode()


@pytest.mark.parametrize("body", [
    b"", b"not json", b'{"type": "message_new", "secret": ', "\ud800".encode("utf-8", "surrogatepass"),
    _with_secret({"group_id": 220000001}),  # no type
    _with_secret({"type": 7, "group_id": 220000001}),
    _with_secret({"type": "message_new", "group_id": 220000001, "object": {"message": {}}}),  # no event_id
    _with_secret({"type": "message_new", "group_id": 220000001, "event_id": "abc"}),  # no object
    _with_secret({"type": "message_new", "group_id": 220000001, "event_id": "abc", "object": {}}),  # no message
    _with_secret({"type": "message_new", "group_id": 220000001, "event_id": "abc",
                  "object": {"message": {"peer_id": "5550001", "from_id": 5550001, "text": "x"}}}),
    _with_secret({"type": "message_event", "group_id": 220000001, "event_id": "abc", "object": {"peer_id": 1}}),
    _with_secret({"type": "message_deny", "group_id": 220000001, "event_id": "abc", "object": {}}),
    _with_secret({"type": "message_new", "group_id": 999, "event_id": "abc",  # another community
                  "object": {"message": {"peer_id": 5550001, "from_id": 5550001, "text": "x"}}}),
])
def test_a_body_that_is_not_an_event_gets_400(post_vk, body):
    response = post_vk(body)
    assert response.status_code == 400
    assert "VK" in response.json()["error"]
    assert not InboundUpdate.objects.exists()


def test_a_huge_body_is_refused(post_vk, settings):
    settings.MESSENGER_MAX_BODY = 1000
    assert post_vk(message_new(CHAT, "а" * 2000, secret=VK_SECRET)).status_code == 413
    assert not InboundUpdate.objects.exists()


def test_an_unknown_address_is_404(post_vk):
    assert post_vk(message_new(CHAT, "привет", secret=VK_SECRET), key="no-such-key").status_code == 404


def test_a_telegram_address_is_not_a_vk_one(post_vk, vk_connected, client):
    response = client.post(f"/messengers/telegram/{vk_connected.webhook_key}/", data=b"{}",
                           content_type="application/json")
    assert response.status_code == 404


def test_events_spravka_does_not_read_are_acknowledged_and_not_stored(post_vk):
    group_chat = message_new(2_000_000_001, "всем привет", secret=VK_SECRET, from_id=CHAT)
    wall = {"type": "wall_post_new", "group_id": 220000001, "event_id": "e1", "secret": VK_SECRET,
            "object": {"id": 1, "text": "пост"}}
    for event in (group_chat, wall):
        response = post_vk(event)
        assert (response.status_code, response.content) == (200, b"ok")
    assert not InboundUpdate.objects.exists()


def test_an_event_for_a_disconnected_community_is_acknowledged_and_ignored(post_vk, vk_connected):
    services.connection_disconnect(connection=vk_connected)
    response = post_vk(message_new(CHAT, "привет", secret=VK_SECRET))
    assert (response.status_code, response.content) == (200, b"ok")
    assert post_vk(confirmation_event(secret=VK_SECRET)).content == b"ok"  # no longer confirmed
    assert not InboundUpdate.objects.exists()


def test_only_post_is_accepted(post_vk, vk_connected, client):
    assert client.get(f"/messengers/vk/{vk_connected.webhook_key}/").status_code == 405
