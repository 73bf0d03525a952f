"""The fake MAX Bot API against the real client (messengers/max_bot.py over httpx) and plain HTTP:
what is sent is recorded, what the fake answers is what MAX answers, and the fault switches become
our errors; the update builders are read by the client as MAX's updates."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from messengers import max_bot
from messengers.exceptions import BadToken, Blocked, SendFailed
from messengers.outgoing import Link, Outgoing
from tests.fakes import FAKE_MAX_TOKEN
from tests.fakes.max_api import (
    FakeMax,
    audio,
    bot_started,
    bot_stopped,
    contact,
    image,
    message_callback,
    message_created,
)

CHAT = 7770001


def send(text: str, **more: Any) -> Any:
    return max_bot.call(FAKE_MAX_TOKEN, "messages", {"chat_id": CHAT, "text": text, "format": "html"} | more)


def test_the_fixture_points_the_setting_at_the_fake(fake_max: FakeMax, settings: Any) -> None:
    assert settings.MAX_API_BASE == fake_max.url
    answer = httpx.get(f"{settings.MAX_API_BASE}/me", headers={"Authorization": FAKE_MAX_TOKEN})
    assert answer.status_code == 200 and answer.json()["username"] == "spravka_shop_bot"


def test_the_token_goes_in_the_header_only(fake_max: FakeMax, settings: Any) -> None:
    assert max_bot.account(FAKE_MAX_TOKEN) == ("229000001", "spravka_shop_bot")
    call = fake_max.calls_of("GET /me")[0]
    assert call.token == FAKE_MAX_TOKEN and call.query == {}
    in_query = httpx.get(f"{settings.MAX_API_BASE}/me", params={"access_token": FAKE_MAX_TOKEN})
    assert in_query.status_code == 401 and in_query.json()["code"] == "verify.token"


def test_a_token_max_does_not_know_is_a_bad_token(fake_max: FakeMax) -> None:
    with pytest.raises(BadToken, match=r"verify\.token"):
        max_bot.account("NotAKnownTokenNotAKnownToken")


def test_a_message_is_recorded_with_its_query_and_body(fake_max: FakeMax) -> None:
    shown = Outgoing(text="Доставка <300 ₽> & быстро", links=[Link(url="https://shop.example/delivery",
                                                                      title="Доставка")],
                     operator_button="Позвать оператора")
    ((method, params),) = max_bot.calls(str(CHAT), shown)
    result = max_bot.call(FAKE_MAX_TOKEN, method, params)
    assert result["message"]["body"]["mid"].startswith("mid.")
    call = fake_max.sent(CHAT)[0]
    assert call.query == {"chat_id": str(CHAT), "disable_link_preview": "true"}
    assert call.body["text"] == "Доставка &lt;300 ₽&gt; &amp; быстро" and call.body["format"] == "html"
    assert call.body["attachments"] == [{"type": "inline_keyboard", "payload": {"buttons": [
        [{"type": "link", "text": "Доставка", "url": "https://shop.example/delivery"}],
        [{"type": "callback", "text": "Позвать оператора", "payload": "operator"}]]}}]


def test_what_max_would_refuse_is_refused_for_good(fake_max: FakeMax) -> None:
    with pytest.raises(SendFailed, match="text") as too_long:
        send("я" * 4001)
    assert too_long.value.status == 400 and not too_long.value.retryable
    with pytest.raises(SendFailed, match="link"):
        send("x", attachments=[{"type": "inline_keyboard", "payload": {"buttons": [
            [{"type": "link", "text": "Сайт", "url": "javascript:alert(1)"}]]}}])


def test_a_blocked_chat_a_rate_limit_and_an_outage(fake_max: FakeMax) -> None:
    fake_max.block(CHAT)
    with pytest.raises(Blocked, match=r"chat\.denied"):
        send("Здравствуйте")
    fake_max.unblock(CHAT)
    fake_max.fail_next("POST /messages", status=429, retry_after=3)
    with pytest.raises(SendFailed) as limited:
        send("Здравствуйте")
    assert (limited.value.status, limited.value.retryable, limited.value.retry_after) == (429, True, 3.0)
    fake_max.down(503)
    with pytest.raises(SendFailed) as away:
        send("Здравствуйте")
    assert away.value.retryable and away.value.status == 503
    fake_max.up()
    assert send("Здравствуйте")["message"]["body"]["text"] == "Здравствуйте"


def test_the_subscription_keeps_its_secret_and_is_removed_by_its_url(fake_max: FakeMax) -> None:
    url = "https://spravka.example/messengers/max/key/"
    max_bot.webhook_set(FAKE_MAX_TOKEN, url=url, secret="Secret_of-the-hook")
    assert fake_max.subscriptions(FAKE_MAX_TOKEN)[url]["secret"] == "Secret_of-the-hook"
    assert set(fake_max.subscriptions(FAKE_MAX_TOKEN)[url]["update_types"]) == set(max_bot.UPDATE_TYPES)
    fake_max.refuse_subscription("Webhook url is unreachable")
    with pytest.raises(SendFailed, match="unreachable"):
        max_bot.webhook_set(FAKE_MAX_TOKEN, url=url + "again/", secret="Secret_of-the-hook")
    max_bot.forget(FAKE_MAX_TOKEN, url)
    assert fake_max.subscriptions(FAKE_MAX_TOKEN) == {}
    assert fake_max.calls_of("DELETE /subscriptions")[0].query == {"url": url}


def test_typing_and_answering_a_press(fake_max: FakeMax) -> None:
    max_bot.typing(FAKE_MAX_TOKEN, str(CHAT))
    assert fake_max.calls_of("POST /chats/{chat_id}/actions", CHAT)[0].body == {"action": "typing_on"}
    press = max_bot.incoming(message_callback(CHAT, "operator"))
    assert press is not None
    max_bot.button_answered(FAKE_MAX_TOKEN, press)
    assert fake_max.calls_of("POST /answers")[0].query == {"callback_id": press.query_id}


def test_the_update_builders_read_as_max_updates() -> None:
    text = max_bot.incoming(message_created(CHAT, "Сколько стоит доставка?", first_name="Анна", last_name="Петрова",
                                            username="anna_p"))
    assert text is not None and (text.kind, text.chat_id, text.name, text.username) == (
        "text", str(CHAT), "Анна Петрова", "anna_p")
    assert text.event_id.startswith("mid.")
    shared = max_bot.incoming(message_created(CHAT, None, attachments=[contact("+79161234567")]))
    assert shared is not None and (shared.kind, shared.phone) == ("contact", "+79161234567")
    photo = max_bot.incoming(message_created(CHAT, "", attachments=[image()]))
    voice = max_bot.incoming(message_created(CHAT, None, attachments=[audio()]))
    assert photo is not None and voice is not None and (photo.what, voice.what) == ("photo", "voice")
    started, stopped = max_bot.incoming(bot_started(CHAT)), max_bot.incoming(bot_stopped(CHAT))
    assert started is not None and started.kind == "start"
    assert stopped is not None and (stopped.kind, stopped.blocked) == ("membership", True)


def test_several_calls_give_each_its_result_or_its_error(fake_max: FakeMax) -> None:
    fake_max.block(CHAT + 1)
    calls = [("messages", {"chat_id": chat, "text": "Ждёт оператора"}) for chat in (CHAT, CHAT + 1, CHAT + 2)]
    first, blocked, third = max_bot.call_many(FAKE_MAX_TOKEN, calls)
    assert first["message"]["recipient"]["chat_id"] == CHAT and third["message"]["recipient"]["chat_id"] == CHAT + 2
    assert isinstance(blocked, Blocked)
    assert [call.query["chat_id"] for call in fake_max.calls_of("POST /messages")] == [str(CHAT + n) for n in range(3)]
