"""The fake Bot API against the real python-telegram-bot: what the client sends is recorded, what the
fake answers is what the client understands, and the fault switches raise PTB's own errors."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest, EndPointNotFound, Forbidden, InvalidToken, NetworkError, RetryAfter, TimedOut
from telegram.request import HTTPXRequest

from tests.fakes import FAKE_TELEGRAM_TOKEN
from tests.fakes.telegram_api import (
    FakeTelegram,
    callback_update,
    contact_update,
    document_update,
    photo_update,
    start_update,
    sticker_update,
    text_update,
    voice_update,
)

CHAT = 5550001


def bot_for(fake: FakeTelegram, token: str = FAKE_TELEGRAM_TOKEN, **request: Any) -> Bot:
    return Bot(token, base_url=f"{fake.url}/bot", request=HTTPXRequest(**request) if request else None)


def seconds(value: int | float | dt.timedelta) -> float:
    """A PTB time period in seconds: an int now, a timedelta with PTB_TIMEDELTA (and later)."""
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


# PTB 22 warns, whenever a time period is read, that its int will become a timedelta.
quiet_time_periods = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


async def test_the_fixture_points_the_setting_at_the_fake(fake_telegram: FakeTelegram, settings: Any) -> None:
    assert settings.TELEGRAM_API_BASE == fake_telegram.url
    async with httpx.AsyncClient() as client:
        answer = await client.get(f"{settings.TELEGRAM_API_BASE}/bot{FAKE_TELEGRAM_TOKEN}/getMe")
    assert answer.json()["result"]["username"] == "spravka_test_bot"


async def test_get_me(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        me = await bot.get_me()
    assert (me.id, me.is_bot, me.username, me.first_name) == (7000000001, True, "spravka_test_bot", "Справка")
    calls = fake_telegram.calls_of("getMe")
    assert len(calls) == 2  # initialize() asks too
    assert {call.token for call in calls} == {FAKE_TELEGRAM_TOKEN}
    assert calls[0].headers["user-agent"].startswith("python-telegram-bot")


async def test_send_message_with_an_inline_keyboard(fake_telegram: FakeTelegram) -> None:
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Сайт", url="https://shop.example/"),
                                      InlineKeyboardButton("Оператор", callback_data="operator")]])
    async with bot_for(fake_telegram) as bot:
        first = await bot.send_message(CHAT, "Здравствуйте!", reply_markup=keyboard)
        second = await bot.send_message(CHAT, '{"looks": "like json"}')
        elsewhere = await bot.send_message(CHAT + 1, "Другой чат")

    assert (first.message_id, second.message_id, elsewhere.message_id) == (1, 2, 1)
    assert (first.chat.id, first.chat.type, first.text) == (CHAT, "private", "Здравствуйте!")
    assert first.from_user is not None and first.from_user.is_bot
    assert first.reply_markup == keyboard
    call = fake_telegram.calls_of("sendMessage", chat_id=CHAT)[0]
    assert call.params["chat_id"] == str(CHAT)
    assert call.params["reply_markup"] == {"inline_keyboard": [[
        {"text": "Сайт", "url": "https://shop.example/"}, {"text": "Оператор", "callback_data": "operator"}]]}
    assert fake_telegram.sent_texts(CHAT) == ["Здравствуйте!", '{"looks": "like json"}']  # free text stays text


async def test_webhook_set_read_back_and_deleted(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        assert await bot.set_webhook("https://spravka.example/tg/hook", secret_token="s3cret-Token_1",
                                     allowed_updates=["message", "callback_query"], drop_pending_updates=True)
        call = fake_telegram.calls_of("setWebhook")[0]
        assert call.params["secret_token"] == "s3cret-Token_1"
        assert call.params["allowed_updates"] == ["message", "callback_query"]
        assert call.params["drop_pending_updates"] == "true"
        assert fake_telegram.webhook(FAKE_TELEGRAM_TOKEN)["secret_token"] == "s3cret-Token_1"

        info = await bot.get_webhook_info()
        assert info.url == "https://spravka.example/tg/hook"
        assert info.allowed_updates == ("message", "callback_query")
        assert (info.pending_update_count, info.has_custom_certificate, info.last_error_message) == (0, False, None)

        fake_telegram.webhook_error(FAKE_TELEGRAM_TOKEN, "Wrong response from the webhook: 500 Internal Server Error")
        info = await bot.get_webhook_info()
        assert info.last_error_message == "Wrong response from the webhook: 500 Internal Server Error"
        assert info.last_error_date is not None

        assert await bot.delete_webhook()
        assert (await bot.get_webhook_info()).url == ""
    assert fake_telegram.webhook(FAKE_TELEGRAM_TOKEN) == {}


async def test_a_certificate_arrives_as_a_multipart_file(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        await bot.set_webhook("https://spravka.example/tg/hook", certificate=b"-----BEGIN CERTIFICATE-----")
    params = fake_telegram.calls_of("setWebhook")[0].params
    assert params["url"] == "https://spravka.example/tg/hook"
    certificate = params["certificate"]
    assert certificate["data"] == b"-----BEGIN CERTIFICATE-----"


async def test_a_blocked_chat_is_forbidden(fake_telegram: FakeTelegram) -> None:
    fake_telegram.block(CHAT)
    async with bot_for(fake_telegram) as bot:
        with pytest.raises(Forbidden, match="bot was blocked by the user"):
            await bot.send_message(CHAT, "Вы здесь?")
        with pytest.raises(Forbidden):
            await bot.send_chat_action(CHAT, "typing")
        await bot.send_message(CHAT + 1, "Другой чат")
        fake_telegram.unblock(CHAT)
        await bot.send_message(CHAT, "Снова можно")
    assert [call.status for call in fake_telegram.calls_of("sendMessage", chat_id=CHAT)] == [403, 200]
    assert fake_telegram.sent_texts(CHAT) == ["Снова можно"]
    assert fake_telegram.sent_texts(CHAT + 1) == ["Другой чат"]


@quiet_time_periods
async def test_fail_next_raises_ptbs_errors_then_recovers(fake_telegram: FakeTelegram) -> None:
    fake_telegram.fail_next("sendMessage", 429, retry_after=3)
    fake_telegram.fail_next("sendMessage", 400, description="Bad Request: can't parse entities")
    fake_telegram.fail_next("sendMessage", 502, times=2)
    async with bot_for(fake_telegram) as bot:
        with pytest.raises(RetryAfter) as flood:
            await bot.send_message(CHAT, "1")
        with pytest.raises(BadRequest, match=r"(?i)can't parse entities"):
            await bot.send_message(CHAT, "2")
        for _ in range(2):
            with pytest.raises(NetworkError):
                await bot.send_message(CHAT, "3")
        await bot.send_message(CHAT, "4")
    assert seconds(flood.value.retry_after) == 3
    assert [call.status for call in fake_telegram.calls_of("sendMessage")] == [429, 400, 502, 502, 200]
    assert fake_telegram.sent_texts(CHAT) == ["4"]


async def test_down_fails_every_method_until_up(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        fake_telegram.down()
        with pytest.raises(NetworkError):
            await bot.get_me()
        with pytest.raises(NetworkError):
            await bot.send_message(CHAT, "…")
        fake_telegram.up()
        await bot.send_message(CHAT, "Снова работает")
    assert fake_telegram.sent_texts(CHAT) == ["Снова работает"]


async def test_an_unknown_token_is_unauthorized(fake_telegram: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with bot_for(fake_telegram, "123:not-registered"):
            pass
    assert [(call.token, call.method, call.status) for call in fake_telegram.calls] == [
        ("123:not-registered", "getMe", 401)]


async def test_an_unknown_method_is_not_found(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        with pytest.raises(EndPointNotFound):
            await bot.do_api_request("sendSomethingNew", {"chat_id": CHAT})
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{fake_telegram.url}/bot{FAKE_TELEGRAM_TOKEN}/sendContact",
                                   data={"chat_id": CHAT, "phone_number": "+70000000000", "first_name": "Анна"})
    assert answer.status_code == 404
    assert answer.json() == {"ok": False, "error_code": 404, "description": "Not Found: method not found"}
    assert [call.status for call in fake_telegram.calls if call.method.startswith("send")] == [404, 404]


async def test_edits_actions_and_callback_answers(fake_telegram: FakeTelegram) -> None:
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Да", callback_data="yes")]])
    async with bot_for(fake_telegram) as bot:
        sent = await bot.send_message(CHAT, "Вопрос?", reply_markup=keyboard)
        assert await bot.send_chat_action(CHAT, "typing")
        assert await bot.answer_callback_query("cb-1", text="Принято")
        edited = await bot.edit_message_reply_markup(CHAT, sent.message_id, reply_markup=None)
        assert isinstance(edited, Message)
        assert (edited.message_id, edited.text, edited.reply_markup) == (sent.message_id, "Вопрос?", None)
        edited = await bot.edit_message_text("Ответ получен", CHAT, sent.message_id)
        assert isinstance(edited, Message)
        assert (edited.text, edited.edit_date is not None) == ("Ответ получен", True)
    assert fake_telegram.calls_of("answerCallbackQuery")[0].params == {"callback_query_id": "cb-1", "text": "Принято"}
    assert fake_telegram.calls_of("sendChatAction", chat_id=CHAT)[0].params["action"] == "typing"


async def test_json_bodies_queries_and_method_case(fake_telegram: FakeTelegram) -> None:
    base = f"{fake_telegram.url}/bot{FAKE_TELEGRAM_TOKEN}"
    async with httpx.AsyncClient() as client:
        sent = await client.post(f"{base}/SENDMESSAGE", json={"chat_id": CHAT, "text": "JSON"})
        action = await client.get(f"{base}/sendChatAction", params={"chat_id": CHAT, "action": "typing"})
        missing = await client.post(f"{fake_telegram.url}/nothing-here")
    assert sent.json()["result"]["text"] == "JSON"
    assert action.json() == {"ok": True, "result": True}
    assert missing.status_code == 404 and missing.json()["ok"] is False
    assert fake_telegram.calls_of("sendMessage")[0].method == "SENDMESSAGE"
    assert fake_telegram.calls_of("sendMessage")[0].params["chat_id"] == CHAT  # a JSON body is kept as it is
    assert fake_telegram.calls_of("sendChatAction", chat_id=CHAT)[0].params["chat_id"] == str(CHAT)


async def test_a_slow_answer_times_the_client_out(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram, read_timeout=0.2) as bot:
        fake_telegram.delay(1.0)
        with pytest.raises(TimedOut):
            await bot.send_message(CHAT, "Медленно")
    assert fake_telegram.calls_of("sendMessage")[0].params["text"] == "Медленно"  # recorded on arrival


async def test_wait_for_returns_the_calls_once_they_arrive(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        waiting = asyncio.create_task(asyncio.to_thread(fake_telegram.wait_for, "sendMessage", 2, chat_id=CHAT))
        await bot.send_message(CHAT, "раз")
        await bot.send_message(CHAT + 1, "не тот чат")
        await bot.send_message(CHAT, "два")
        calls = await waiting
    assert [call.params["text"] for call in calls] == ["раз", "два"]


async def test_wait_for_times_out_saying_what_arrived(fake_telegram: FakeTelegram) -> None:
    async with bot_for(fake_telegram) as bot:
        await bot.send_message(CHAT + 1, "не тот чат")
    with pytest.raises(AssertionError) as timeout:
        fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=0.1)
    message = str(timeout.value)
    assert f"expected 1 sendMessage call(s) to chat {CHAT} within 0.1s" in message
    assert "не тот чат" in message and "getMe" in message
    fake_telegram.clear()
    with pytest.raises(AssertionError, match="arrived: none"):
        fake_telegram.wait_for("getMe", timeout=0.05)


# --- update builders -------------------------------------------------------------------------------------------


def _check_text(update: Update) -> None:
    assert update.message is not None and update.message.text == "Сколько стоит доставка?"
    assert update.message.from_user is not None and update.message.from_user.username == "anna"


def _check_start(update: Update) -> None:
    assert update.message is not None and update.message.text == "/start site-42"
    assert update.message.parse_entities(["bot_command"]) == {update.message.entities[0]: "/start"}


def _check_callback(update: Update) -> None:
    query = update.callback_query
    assert query is not None and query.data == "operator"
    assert query.message is not None and query.message.message_id == 7
    assert query.from_user.id == CHAT


def _check_photo(update: Update) -> None:
    assert update.message is not None and update.message.text is None
    assert [size.width for size in update.message.photo] == [320, 1280] and update.message.caption == "Вот так"


def _check_voice(update: Update) -> None:
    assert update.message is not None and update.message.voice is not None
    voice = update.message.voice
    assert seconds(voice.duration) == 3 and voice.mime_type == "audio/ogg"


def _check_sticker(update: Update) -> None:
    assert update.message is not None and update.message.sticker is not None
    assert (update.message.sticker.type, update.message.sticker.emoji) == ("regular", "👍")


def _check_document(update: Update) -> None:
    assert update.message is not None and update.message.document is not None
    assert update.message.document.file_name == "rekvizity.pdf"


def _check_contact(update: Update) -> None:
    assert update.message is not None and update.message.contact is not None
    assert (update.message.contact.phone_number, update.message.contact.user_id) == ("+79990001122", CHAT)


BUILDERS: dict[str, tuple[dict[str, Any], Callable[[Update], None]]] = {
    "text": (text_update(1, CHAT, "Сколько стоит доставка?"), _check_text),
    "start": (start_update(2, CHAT, "site-42"), _check_start),
    "callback": (callback_update(3, CHAT, "operator", message_id=7), _check_callback),
    "photo": (photo_update(4, CHAT, caption="Вот так"), _check_photo),
    "voice": (voice_update(5, CHAT, duration=3), _check_voice),
    "sticker": (sticker_update(6, CHAT), _check_sticker),
    "document": (document_update(7, CHAT), _check_document),
    "contact": (contact_update(8, CHAT, "+79990001122", first_name="Анна"), _check_contact),
}


@quiet_time_periods
@pytest.mark.parametrize("kind", BUILDERS)
def test_update_builders_parse_as_telegram_updates(kind: str) -> None:
    data, check = BUILDERS[kind]
    update = Update.de_json(data, Bot(FAKE_TELEGRAM_TOKEN))
    assert update.update_id == data["update_id"]
    assert update.effective_chat is not None and update.effective_chat.id == CHAT
    assert update.effective_user is not None and update.effective_user.language_code == "ru"
    check(update)


def test_builders_speak_as_the_chats_user() -> None:
    data = text_update(9, CHAT, "Привет", first_name="Иван", last_name="Петров", username="", message_id=40)
    message = data["message"]
    assert message["message_id"] == 40 and isinstance(message["date"], int)
    assert message["from"] == {"id": CHAT, "is_bot": False, "first_name": "Иван", "last_name": "Петров",
                               "language_code": "ru"}
    assert message["chat"] == {"id": CHAT, "type": "private", "first_name": "Иван", "last_name": "Петров"}
