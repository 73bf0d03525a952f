"""The fake VK API against the real client (messengers/vk.py over httpx) and plain HTTP: what is sent
is recorded, what the fake answers is what VK answers, and the fault switches become our errors."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from messengers import vk
from messengers.exceptions import BadToken, Blocked, SendFailed
from tests.fakes import FAKE_VK_GROUP_ID, FAKE_VK_TOKEN
from tests.fakes.vk_api import (
    FakeVK,
    confirmation_event,
    message_allow,
    message_deny,
    message_event,
    message_new,
    photo,
    start_event,
)

PEER = 5550001


def send(text: str, *, random_id: int, peer: int = PEER, **more: Any) -> Any:
    return vk.call(FAKE_VK_TOKEN, "messages.send", {"peer_id": peer, "random_id": random_id, "message": text} | more)


def test_the_fixture_points_the_setting_at_the_fake(fake_vk: FakeVK, settings: Any) -> None:
    assert settings.VK_API_BASE == fake_vk.url
    answer = httpx.post(f"{settings.VK_API_BASE}/method/groups.getById",
                        data={"access_token": FAKE_VK_TOKEN, "v": "5.199"})
    assert answer.status_code == 200
    assert answer.json()["response"]["groups"][0]["id"] == FAKE_VK_GROUP_ID


def test_groups_get_by_id_names_the_token_s_community(fake_vk: FakeVK) -> None:
    assert vk.community(FAKE_VK_TOKEN) == (str(FAKE_VK_GROUP_ID), "Магазин «Справка»")
    call = fake_vk.calls_of("groups.getById")[0]
    assert call.token == FAKE_VK_TOKEN and call.params["v"] == vk.VK_API_VERSION
    assert "access_token" not in call.params  # taken out of what is recorded


def test_tokens_vk_does_not_know_or_of_a_user(fake_vk: FakeVK) -> None:
    with pytest.raises(BadToken, match="VK error 5"):
        vk.community("vk1.a.unknown")
    fake_vk.add_user_token("vk1.a.user-token")
    with pytest.raises(SendFailed, match="group_ids is undefined") as refused:
        vk.community("vk1.a.user-token")
    assert refused.value.status == 100 and not refused.value.retryable


def test_errors_come_as_http_200_with_an_error_object(fake_vk: FakeVK, settings: Any) -> None:
    no_version = httpx.post(f"{settings.VK_API_BASE}/method/users.get", data={"access_token": FAKE_VK_TOKEN})
    assert no_version.status_code == 200 and no_version.json()["error"]["error_code"] == 8
    unknown = httpx.post(f"{settings.VK_API_BASE}/method/wall.post", data={"access_token": FAKE_VK_TOKEN, "v": "5.199"})
    assert unknown.json()["error"]["error_code"] == 3


def test_messages_send_records_what_was_sent_and_counts_message_ids(fake_vk: FakeVK) -> None:
    keyboard = {"inline": True, "buttons": [[{"action": {"type": "open_link", "link": "https://shop.example/",
                                                          "label": "Сайт"}}]]}
    assert send("Здравствуйте!", random_id=11, keyboard=keyboard) == 1
    assert send('{"looks": "like json"}', random_id=12) == 2
    call = fake_vk.calls_of("messages.send", peer_id=PEER)[0]
    assert call.params["peer_id"] == str(PEER) and call.params["random_id"] == "11"
    assert call.params["keyboard"] == keyboard  # decoded from its JSON
    assert fake_vk.sent_texts(PEER) == ["Здравствуйте!", '{"looks": "like json"}']  # text stays text


def test_a_random_id_is_sent_once(fake_vk: FakeVK) -> None:
    first = send("Один раз", random_id=77)
    again = send("Один раз", random_id=77)
    assert first == again
    assert fake_vk.calls_of("messages.send")[1].duplicate
    assert fake_vk.sent_texts(PEER) == ["Один раз"]


@pytest.mark.parametrize(("params", "code"), [
    ({"random_id": 1, "message": "x" * 4097}, 914),
    ({"random_id": 1, "message": ""}, 100),
    ({"message": "без random_id"}, 100),
    ({"random_id": 1, "message": "x", "keyboard": {"inline": True, "buttons": [[{"action": {
        "type": "callback", "label": "л" * 41, "payload": "{}"}}]]}}, 911),
])
def test_what_vk_refuses_in_a_message(fake_vk: FakeVK, params: dict[str, Any], code: int) -> None:
    with pytest.raises(SendFailed) as refused:
        vk.call(FAKE_VK_TOKEN, "messages.send", {"peer_id": PEER} | params)
    assert refused.value.status == code and not refused.value.retryable


def test_without_bot_features_a_message_goes_without_its_keyboard(fake_vk: FakeVK) -> None:
    fake_vk.bot_features(False)
    keyboard = {"inline": True, "buttons": [
        [{"action": {"type": "open_link", "link": "https://shop.example/delivery", "label": "Доставка"}}],
        [{"action": {"type": "callback", "label": "Позвать оператора", "payload": '{"cmd":"operator"}'}}]]}
    assert send("300 ₽.", random_id=5, keyboard=keyboard) == 1
    refused, sent = fake_vk.calls_of("messages.send")
    assert refused.error == 912 and "keyboard" not in sent.params
    assert sent.params["message"] == "300 ₽.\n\n• Доставка: https://shop.example/delivery"
    assert sent.params["random_id"] == "5"


def test_a_blocked_peer_is_901(fake_vk: FakeVK) -> None:
    fake_vk.block(PEER)
    with pytest.raises(Blocked, match="901"):
        send("привет", random_id=1)
    fake_vk.unblock(PEER)
    assert send("привет", random_id=2) == 1


@pytest.mark.parametrize(("code", "retryable"), [(6, True), (9, True), (10, True), (902, None), (15, False)])
def test_fail_next_answers_vk_s_error(fake_vk: FakeVK, code: int, retryable: bool | None) -> None:
    fake_vk.fail_next("messages.send", code=code)
    if retryable is None:
        with pytest.raises(Blocked):
            send("привет", random_id=1)
    else:
        with pytest.raises(SendFailed) as failed:
            send("привет", random_id=1)
        assert failed.value.status == code and failed.value.retryable is retryable
    assert send("привет", random_id=2) == 1  # only the next call failed


def test_down_and_a_slow_answer_may_be_retried(fake_vk: FakeVK, settings: Any) -> None:
    fake_vk.down(502)
    with pytest.raises(SendFailed) as failed:
        send("привет", random_id=1)
    assert failed.value.status == 502 and failed.value.retryable
    fake_vk.up()
    settings.MESSENGER_TIMEOUT = 0.2
    fake_vk.delay(1.0)
    with pytest.raises(SendFailed, match="Timeout") as slow:
        send("привет", random_id=2)
    assert slow.value.retryable


def test_event_answers_activity_and_users(fake_vk: FakeVK) -> None:
    assert vk.call(FAKE_VK_TOKEN, "messages.sendMessageEventAnswer",
                   {"event_id": "3159dc190b1f", "user_id": PEER, "peer_id": PEER}) == 1
    assert vk.call(FAKE_VK_TOKEN, "messages.setActivity", {"peer_id": PEER, "type": "typing"}) == 1
    fake_vk.add_user(PEER, "Анна", "Петрова", "anna_p")
    assert vk.profile(FAKE_VK_TOKEN, str(PEER)) == ("Анна Петрова", "anna_p")
    assert vk.profile(FAKE_VK_TOKEN, "999") == ("", "")  # a deleted profile names nobody


def test_the_event_builders_read_as_vk_s() -> None:
    secret = "s3cret-key"
    assert confirmation_event(secret=secret) == {"type": "confirmation", "group_id": FAKE_VK_GROUP_ID,
                                                 "secret": secret}
    new = message_new(PEER, "Сколько стоит доставка?", secret=secret)
    assert new["type"] == "message_new" and len(new["event_id"]) == 40 and new["secret"] == secret
    assert new["object"]["message"]["peer_id"] == PEER and new["object"]["client_info"]["inline_keyboard"]
    assert json.loads(start_event(PEER, secret=secret)["object"]["message"]["payload"]) == {"command": "start"}
    assert message_new(PEER, "", secret=secret, attachments=[photo()])["object"]["message"]["attachments"][0][
        "type"] == "photo"
    press = message_event(PEER, {"cmd": "operator"}, secret=secret)["object"]
    assert press["payload"] == {"cmd": "operator"} and press["event_id"]
    assert message_deny(PEER, secret=secret)["object"] == {"user_id": PEER}
    assert message_allow(PEER, secret=secret)["type"] == "message_allow"
