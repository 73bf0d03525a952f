"""Telegram: updates in, Bot API calls out, through python-telegram-bot (PTB).

Why PTB: it is the most used and best kept Telegram library for Python, typed, and built on httpx,
which the project already pins (aiogram would bring aiohttp and pydantic). PTB is asynchronous;
Spravka calls it from synchronous code (Celery tasks, commands, views), so each call runs in its own
short event loop with a client closed right after (`_run`); the clients share one TLS context
(`_tls`), made once per process. Every call goes to
`{TELEGRAM_API_BASE}/bot{token}/{method}`: the official server by default, a self-hosted Bot API
server or the tests' fake (tests/fakes/telegram_api.py) when the setting says so.

Nothing here touches the database: `incoming` reads an update into an `Incoming`, `calls` turns an
`Outgoing` into the calls that show it, `call` makes one and maps Telegram's answers onto
messengers.exceptions. The module is a transport (messengers/transports.py): vk.py and max_bot.py
offer the same functions.
"""

from __future__ import annotations

import asyncio
import functools
import html
import ssl
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Final, TypeVar

import httpx
from django.conf import settings
from django.utils.translation import gettext_noop
from telegram import Bot as TelegramBot
from telegram import Update, error
from telegram.request import HTTPXRequest
from telegram.warnings import PTBUserWarning

from messengers.exceptions import BadToken, BadUpdate, Blocked, SendFailed
from messengers.incoming import OPERATOR, Incoming, Kind
from messengers.outgoing import Outgoing, split

MAX_TEXT: Final = 4096  # sendMessage's limit, in characters after the markup is parsed
# Requests one client keeps open at once (call_many). Telegram takes about 30 messages a second to
# different chats; more than that gets a 429 with retry_after, which the chat's retry honours.
IN_FLIGHT: Final = 20
TEXT_MARGIN: Final = 700  # an operator's name and up to five product lines
ALLOWED_UPDATES: Final = ["message", "callback_query", "my_chat_member"]
OPERATOR_DATA: Final = OPERATOR  # callback data of «Позвать оператора»
TOKEN_REFUSED: Final = gettext_noop("Telegram больше не принимает токен: подключите бота заново.")
NOT_TEXT: Final = {  # what a message without text carries, as the inbox shows it
    "photo": "photo", "video": "video", "voice": "voice", "audio": "audio", "video_note": "video",
    "sticker": "sticker", "document": "file", "animation": "video", "location": "location",
}

T = TypeVar("T")


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context every client of this process uses: the one httpx would make (certifi's
    certificates, or SSL_CERT_FILE / SSL_CERT_DIR), loaded once. httpx loads it anew for each client
    it makes, 40–80 ms of CPU here: most of a call's own cost, twice per turn (typing and the
    reply). A context is safe to share between threads and event loops."""
    return httpx.create_ssl_context()


def _run(token: str, work: Callable[[TelegramBot], Awaitable[T]], *, connections: int = 1) -> T:
    """`work` with a client of its own (up to `connections` requests in flight), closed afterwards,
    in a loop of its own."""
    timeout = settings.MESSENGER_TIMEOUT
    request = HTTPXRequest(connection_pool_size=connections, connect_timeout=timeout, read_timeout=timeout,
                           write_timeout=timeout, pool_timeout=timeout, httpx_kwargs={"verify": _tls()})

    async def run() -> T:
        client = TelegramBot(token, base_url=f"{settings.TELEGRAM_API_BASE}/bot", request=request,
                             get_updates_request=request)
        try:
            return await work(client)
        finally:
            await request.shutdown()

    return asyncio.run(run())


def _seconds(value: int | float | timedelta) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _failure(exc: error.TelegramError) -> Exception:
    """Telegram's answer as one of ours: blocked, wait, try later, or a permanent refusal."""
    if isinstance(exc, error.Forbidden):
        return Blocked(str(exc))
    if isinstance(exc, error.InvalidToken):
        return BadToken(str(exc))
    if isinstance(exc, error.RetryAfter):
        with warnings.catch_warnings():  # PTB 22 warns that the int form is going away
            warnings.simplefilter("ignore")
            wait = _seconds(exc.retry_after)
        return SendFailed(str(exc), status=429, retryable=True, retry_after=wait)
    if isinstance(exc, error.BadRequest):
        return SendFailed(str(exc), status=400, retryable=False)
    return SendFailed(str(exc), status=None, retryable=True)  # network, timeouts, 5xx


def call(token: str, method: str, params: dict[str, Any]) -> Any:
    """One Bot API method with JSON-able parameters; its result, or our exception."""
    async def work(client: TelegramBot) -> Any:
        # Calls are stored as a method and JSON parameters (a Delivery) and replayed by name, which
        # PTB allows through do_api_request while it would rather see its typed methods: it says so.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTBUserWarning)
            return await client.do_api_request(method, api_kwargs=params)

    try:
        return _run(token, work)
    except error.TelegramError as exc:
        raise _failure(exc) from exc


def call_many(token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Several calls at once through one client (at most IN_FLIGHT requests open): for each, its
    result or our exception, in order."""
    async def one(client: TelegramBot, method: str, params: dict[str, Any]) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTBUserWarning)
            try:
                return await client.do_api_request(method, api_kwargs=params)
            except error.TelegramError as exc:
                return _failure(exc)

    async def work(client: TelegramBot) -> list[Any]:
        return list(await asyncio.gather(*(one(client, method, params) for method, params in calls)))

    if not calls:
        return []
    return _run(token, work, connections=min(len(calls), IN_FLIGHT))


def account(token: str) -> tuple[str, str]:
    """(id, @username) of the bot the token belongs to; BadToken when Telegram does not know it."""
    me = call(token, "getMe", {})
    return str(me.get("id", "")), str(me.get("username", ""))


def webhook_set(token: str, *, url: str, secret: str) -> None:
    call(token, "setWebhook", {"url": url, "secret_token": secret, "allowed_updates": ALLOWED_UPDATES})


def webhook_delete(token: str) -> None:
    call(token, "deleteWebhook", {})


def forget(token: str, url: str) -> None:
    """Disconnecting: Telegram stops posting updates (deleteWebhook: a bot has one webhook)."""
    webhook_delete(token)


# ----- updates in ---------------------------------------------------------------------------------


def _name(user: Any) -> str:
    if user is None:
        return ""
    return " ".join(part for part in (user.first_name, user.last_name) if part)


def secret_in(payload: Any) -> str:
    """Telegram sends the secret in a header (X-Telegram-Bot-Api-Secret-Token), never in the body."""
    return ""


def account_in(payload: Any) -> str:
    """An update does not say which bot it is for: the webhook's address does."""
    return ""


def profile(token: str, chat_id: str) -> tuple[str, str]:
    """Telegram names the user in every update: nothing to ask."""
    return "", ""


def incoming(payload: Any) -> Incoming | None:
    """What an update means to Spravka, or None for one it ignores (an edit, a channel post).
    BadUpdate when it is not a Telegram update at all."""
    if not isinstance(payload, dict) or not isinstance(payload.get("update_id"), int):
        raise BadUpdate("no update_id")
    try:
        update = Update.de_json(payload, None)
    except (KeyError, TypeError, ValueError) as exc:
        raise BadUpdate(str(exc)) from exc
    if update is None:
        raise BadUpdate("empty")
    event_id, number = str(update.update_id), update.update_id
    if update.my_chat_member is not None:  # the user blocked (kicked) or restarted the bot
        member = update.my_chat_member
        return Incoming(event_id=event_id, update_id=number, chat_id=str(member.chat.id), kind="membership",
                        name=_name(member.from_user), username=member.from_user.username or "",
                        blocked=member.new_chat_member.status == "kicked")
    if update.callback_query is not None:
        query = update.callback_query
        chat = query.message.chat if query.message is not None else None
        if chat is None:
            return None
        return Incoming(event_id=event_id, update_id=number, chat_id=str(chat.id), kind="button",
                        name=_name(query.from_user), username=query.from_user.username or "", data=query.data or "",
                        query_id=query.id)
    message = update.message
    if message is None or message.chat.type != "private":  # groups and channels are not visitors
        return None
    sender = message.from_user

    def read(kind: Kind, *, text: str = "", phone: str = "", what: str = "", payload: str = "",
             reply_to: int | None = None) -> Incoming:
        return Incoming(event_id=event_id, update_id=number, chat_id=str(message.chat.id), kind=kind,
                        name=_name(sender), username=(sender.username or "") if sender else "", text=text,
                        phone=phone, what=what, payload=payload, reply_to=reply_to)

    if message.contact is not None:
        return read("contact", phone=message.contact.phone_number or "")
    if message.text is not None:
        command, _, payload = message.text.strip().partition(" ")
        if command.split("@")[0] == "/start":
            return read("start", payload=payload.strip())
        replied = message.reply_to_message
        return read("text", text=message.text, reply_to=replied.message_id if replied is not None else None)
    return read("not_text", what=next(
        (label for attribute, label in NOT_TEXT.items() if getattr(message, attribute, None)), "file"))


# ----- calls out ----------------------------------------------------------------------------------


def _text(shown: Outgoing) -> str:
    text = html.escape(shown.text, quote=False)
    if shown.note:
        text = f"<i>{text}</i>"
    if shown.author:
        text = f"<b>{html.escape(shown.author, quote=False)}</b>\n{text}"
    if shown.consent:
        text = f"{text}\n\n<i>{html.escape(shown.consent, quote=False)}</i>"
    if shown.cards:
        lines = [f'• <a href="{html.escape(card.url)}">{html.escape(card.title, quote=False)}</a>'
                 for card in shown.cards]
        text = text + "\n\n" + "\n".join(lines)
    return text


def _markup(shown: Outgoing) -> dict[str, Any] | None:
    if shown.contact_button:  # a phone is asked with Telegram's own button (the consent is in the text)
        return {"keyboard": [[{"text": shown.contact_button, "request_contact": True}]],
                "resize_keyboard": True, "one_time_keyboard": True}
    rows = [[{"text": link.title, "url": link.url}] for link in shown.links]
    if shown.operator_button:
        rows.append([{"text": shown.operator_button, "callback_data": OPERATOR_DATA}])
    if shown.actions:
        rows.append([{"text": label, "callback_data": data} for label, data in shown.actions])
    return {"inline_keyboard": rows} if rows else None


def calls(chat_id: str, shown: Outgoing) -> list[tuple[str, dict[str, Any]]]:
    """The sendMessage calls that show `shown`: the text in parts that stay under Telegram's 4096
    characters (counted after the markup is parsed, so the cut is made in the plain text, never
    inside a tag; the margin leaves room for the author's name and the product list), the buttons
    under the last part."""
    plain_parts = split(shown.text, MAX_TEXT - TEXT_MARGIN) or [""]
    made: list[tuple[str, dict[str, Any]]] = []
    for number, part in enumerate(plain_parts):
        last = number == len(plain_parts) - 1
        piece = Outgoing(text=part, author=shown.author if number == 0 else "", note=shown.note,
                         cards=shown.cards if last else [], consent=shown.consent if last else "")
        params: dict[str, Any] = {
            "chat_id": chat_id, "text": _text(piece), "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
        markup = _markup(shown) if last else None
        if markup is not None:
            params["reply_markup"] = markup
        made.append(("sendMessage", params))
    return made


def notice_edit(params: dict[str, Any], message_id: int, line: str) -> tuple[str, dict[str, Any]]:
    """The call that rewrites a sent message (`params`: its sendMessage's) with `line` added and
    no buttons left."""
    return "editMessageText", {
        "chat_id": params["chat_id"], "message_id": message_id, "parse_mode": "HTML",
        "text": f"{params.get('text', '')}\n\n<i>{html.escape(line)}</i>",
        "link_preview_options": {"is_disabled": True},
    }


def typing(token: str, chat_id: str) -> None:
    """«печатает…» while the answer is made: a courtesy, so a failure is ignored."""
    try:
        call(token, "sendChatAction", {"chat_id": chat_id, "action": "typing"})
    except (SendFailed, Blocked, BadToken):
        pass


def button_answered(token: str, read: Incoming) -> None:
    """Stop the button's spinner in the user's app (a courtesy too)."""
    try:
        call(token, "answerCallbackQuery", {"callback_query_id": read.query_id})
    except (SendFailed, Blocked, BadToken):
        pass
