"""MAX: a bot's dialogs through the MAX Bot API. Updates come to a webhook subscription, calls go out
over httpx.

Why plain httpx and not the `maxapi` package: maxapi is asynchronous only (aiohttp), and brings
pydantic, aiofiles, puremagic, magic-filter and backoff with it; it retries 502–504 by itself with
its own backoff and raises its own errors, where Spravka's deliveries are synchronous Celery tasks
that retry with their own backoff and keep each call as a method and JSON parameters
(messengers/delivery.py). What Spravka needs is six documented REST calls, made here with the httpx
the project pins: `{MAX_API_BASE}{path}` (default the official `https://platform-api2.max.ru`; the
tests' fake, tests/fakes/max_api.py, when the setting says so), the bot's token in the
`Authorization` header (never in the URL: MAX no longer takes it there, and it stays out of logs).

Answers are JSON. A failure is its HTTP status with `{"code", "message"}`; `call` maps them onto
messengers.exceptions: 401, or the code `verify.token`, → BadToken; 403 (the user stopped or blocked
the bot: `chat.denied`, «error.dialog.suspended») → Blocked; 429 (MAX allows about 30 calls a
second), 5xx and timeouts → SendFailed that may be retried (a `Retry-After` header is honoured when
MAX sends one); any other status, and a `{"success": false}` answer, → SendFailed for good.

Updates: MAX posts one JSON update per request with the header `X-Max-Bot-Api-Secret`, the secret
the subscription was made with (messengers/views.py checks it before the body is read). Read here:
`message_created` (a text, a shared contact, an attachment), `message_callback` (a press on a
callback button, acknowledged with POST /answers), `bot_started` (the user pressed «Начать», or
came back after stopping the bot) and `bot_stopped` (the chat is blocked); group chats, channels
and other bots are not visitors, other updates are acknowledged and ignored. An update has no id of
its own: it is stored under its message's `mid`, the callback's id, or the dialog and the time.

The text goes as MAX's HTML (`format: html`), every text escaped; it is cut so that what is sent
stays under MAX's 4000 characters with the markup. Nothing here touches the database. This module
is a transport (messengers/transports.py): it offers the same functions as telegram.py and vk.py.
"""

from __future__ import annotations

import functools
import hashlib
import html
import re
import ssl
from typing import Any, Final

import httpx
from django.conf import settings
from django.utils.translation import gettext_noop

from messengers.exceptions import BadToken, BadUpdate, Blocked, SendFailed
from messengers.incoming import OPERATOR, Incoming, Kind
from messengers.outgoing import Outgoing, split

MAX_TEXT: Final = 4000  # a message's text, counted here with its markup
TEXT_MARGIN: Final = 900  # an operator's name, the consent text with the policy's address, five product lines
UPDATE_TYPES: Final = ["message_created", "message_callback", "bot_started", "bot_stopped"]
TOKEN_REFUSED: Final = gettext_noop("MAX больше не принимает токен: подключите бота заново.")
BAD_TOKEN_CODE: Final = "verify.token"  # noqa: S105 - an error code, not a secret
NOT_TEXT: Final = {  # attachment types, as the inbox names them (MAX's voice messages are audio)
    "image": "photo", "video": "video", "audio": "voice", "sticker": "sticker", "file": "file",
    "location": "location",
}
EVENT_KEY: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
RETRY_AFTER_MAX: Final = 3600.0
# Our name of each call → (HTTP method, path, the parameters sent in the query string). A `{name}`
# in the path is filled from the parameter of that name; the other parameters are the JSON body.
ROUTES: Final[dict[str, tuple[str, str, tuple[str, ...]]]] = {
    "me": ("GET", "/me", ()),
    "subscribe": ("POST", "/subscriptions", ()),
    "unsubscribe": ("DELETE", "/subscriptions", ("url",)),
    "messages": ("POST", "/messages", ("chat_id", "user_id", "disable_link_preview")),
    "answers": ("POST", "/answers", ("callback_id",)),
    "actions": ("POST", "/chats/{chat_id}/actions", ()),
}
PATH_PARAM: Final = re.compile(r"\{(\w+)\}")


# ----- calls out ----------------------------------------------------------------------------------


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context per process (certifi's certificates, or SSL_CERT_FILE / SSL_CERT_DIR: MAX's
    own address is certified by the Russian Trusted Root CA, which a server may have to add there).
    httpx would otherwise load the store again for every call."""
    return httpx.create_ssl_context()


def _query(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _request(method: str, params: dict[str, Any]) -> tuple[str, str, dict[str, str], dict[str, Any] | None]:
    """(HTTP method, URL, query, JSON body) of one call."""
    try:
        verb, path, in_query = ROUTES[method]
    except KeyError:
        raise SendFailed(f"{method}: not a MAX call", status=None, retryable=False) from None
    in_path = PATH_PARAM.findall(path)
    url = settings.MAX_API_BASE + path.format(**{name: params.get(name, "") for name in in_path})
    query = {key: _query(value) for key, value in params.items() if key in in_query and value is not None}
    body = {key: value for key, value in params.items() if key not in in_query and key not in in_path}
    return verb, url, query, (body if verb == "POST" else None)


def _retry_after(answer: httpx.Response) -> float | None:
    try:
        seconds = float(answer.headers.get("retry-after", ""))
    except ValueError:
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)


def _failure(method: str, answer: httpx.Response) -> Exception:
    """MAX's refusal as one of ours: a bad token, blocked, try later, or a permanent refusal."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    code, message = str(body.get("code") or ""), str(body.get("message") or body.get("error") or "")
    status = answer.status_code
    text = f"{method}: MAX {status} {code}: {message[:300]}".rstrip(": ")
    if status == 401 or code == BAD_TOKEN_CODE:
        return BadToken(text)
    if status == 403:
        return Blocked(text)
    if status == 429:
        return SendFailed(text, status=429, retryable=True, retry_after=_retry_after(answer))
    return SendFailed(text, status=status, retryable=status >= 500)


def call(token: str, method: str, params: dict[str, Any]) -> Any:
    """One call of the MAX Bot API with JSON-able parameters; its answer, or our exception."""
    verb, url, query, body = _request(method, params)
    try:
        answer = httpx.request(verb, url, params=query, json=body, headers={"Authorization": token},
                               timeout=settings.MESSENGER_TIMEOUT, verify=_tls())
    except httpx.HTTPError as exc:  # a timeout, a refused or dropped connection
        raise SendFailed(f"{method}: {type(exc).__name__}: {exc}"[:500], status=None, retryable=True) from exc
    if answer.status_code != 200:
        raise _failure(method, answer)
    try:
        result = answer.json()
    except ValueError as exc:
        raise SendFailed(f"{method}: the answer is not JSON", status=200, retryable=True) from exc
    if isinstance(result, dict) and result.get("success") is False:
        raise SendFailed(f"{method}: MAX refused: {str(result.get('message', ''))[:300]}", status=200,
                         retryable=False)
    return result


def call_many(token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Several calls, one after another (MAX takes about 30 a second from a bot): for each, its
    result or our exception, in order."""
    results: list[Any] = []
    for method, params in calls:
        try:
            results.append(call(token, method, params))
        except (Blocked, BadToken, SendFailed) as exc:
            results.append(exc)
    return results


def account(token: str) -> tuple[str, str]:
    """(id, name) of the bot the token belongs to (GET /me): its @name when it has one; BadToken
    when MAX does not know the token."""
    me = call(token, "me", {})
    user_id = me.get("user_id") if isinstance(me, dict) else None
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise SendFailed("me: no bot in the answer", status=200, retryable=False)
    return str(user_id), str(me.get("username") or me.get("name") or me.get("first_name") or "")


def webhook_set(token: str, *, url: str, secret: str) -> None:
    """Subscribe the bot's updates to `url`, each posted with `secret` in X-Max-Bot-Api-Secret."""
    call(token, "subscribe", {"url": url, "update_types": UPDATE_TYPES, "secret": secret})


def forget(token: str, url: str) -> None:
    """Disconnecting: MAX stops posting updates to this address (DELETE /subscriptions)."""
    call(token, "unsubscribe", {"url": url})


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


def _keyboard(shown: Outgoing) -> list[dict[str, Any]]:
    """The buttons as an inline keyboard attachment: source pages as links, then «Поделиться
    номером» (MAX's request_contact), «Позвать оператора» and an operator's actions as callbacks."""
    rows: list[list[dict[str, Any]]] = [[{"type": "link", "text": link.title, "url": link.url}] for link in shown.links]
    if shown.contact_button:
        rows.append([{"type": "request_contact", "text": shown.contact_button}])
    if shown.operator_button:
        rows.append([{"type": "callback", "text": shown.operator_button, "payload": OPERATOR}])
    if shown.actions:
        rows.append([{"type": "callback", "text": label, "payload": data} for label, data in shown.actions])
    return [{"type": "inline_keyboard", "payload": {"buttons": rows}}] if rows else []


def _parts(text: str, limit: int, cut: int | None = None) -> list[str]:
    """`text` cut (every `cut` characters at most) so that each part stays under `limit` characters
    once escaped (an «&» takes five): a part that grows past it is cut again, shorter."""
    parts: list[str] = []
    for part in split(text, cut or limit):
        size = len(html.escape(part, quote=False))
        if size > limit and len(part) > 1:
            parts.extend(_parts(part, limit, max(1, len(part) * limit // size)))
        else:
            parts.append(part)
    return parts


def calls(chat_id: str, shown: Outgoing) -> list[tuple[str, dict[str, Any]]]:
    """The POST /messages calls that show `shown`: the text in parts under MAX's 4000 characters
    with the markup (the margin leaves room for the author's name, the consent and the product
    list), the buttons under the last part."""
    pieces = _parts(shown.text, MAX_TEXT - TEXT_MARGIN) or [""]
    made: list[tuple[str, dict[str, Any]]] = []
    for number, part in enumerate(pieces):
        last = number == len(pieces) - 1
        piece = Outgoing(text=part, author=shown.author if number == 0 else "", note=shown.note,
                         cards=shown.cards if last else [], consent=shown.consent if last else "")
        params: dict[str, Any] = {"chat_id": int(chat_id), "disable_link_preview": True, "text": _text(piece),
                                  "format": "html"}
        attachments = _keyboard(shown) if last else []
        if attachments:
            params["attachments"] = attachments
        made.append(("messages", params))
    return made


def typing(token: str, chat_id: str) -> None:
    """«печатает…» while the answer is made: a courtesy, so a failure is ignored."""
    try:
        call(token, "actions", {"chat_id": chat_id, "action": "typing_on"})
    except (SendFailed, Blocked, BadToken):
        pass


def button_answered(token: str, read: Incoming) -> None:
    """Acknowledge the press (POST /answers, no notification): a courtesy too."""
    if not read.query_id:
        return
    try:
        call(token, "answers", {"callback_id": read.query_id})
    except (SendFailed, Blocked, BadToken):
        pass


def profile(token: str, chat_id: str) -> tuple[str, str]:
    """MAX names the user in every update: nothing to ask."""
    return "", ""


# ----- updates in ---------------------------------------------------------------------------------


def secret_in(payload: Any) -> str:
    """MAX sends the secret in a header (X-Max-Bot-Api-Secret), never in the body."""
    return ""


def account_in(payload: Any) -> str:
    """An update does not say which bot it is for: the webhook's address does."""
    return ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def event_key(raw: str) -> str:
    """An update's own id as stored (at most 64 characters of a safe alphabet; a digest otherwise)."""
    if EVENT_KEY.fullmatch(raw):
        return raw
    return "h" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:63]


def _user(value: Any) -> tuple[str, str]:
    """(name, @name) of a user object; BadUpdate when it is not one."""
    if not isinstance(value, dict) or _int(value.get("user_id")) is None:
        raise BadUpdate("no user")
    name = " ".join(str(value[part]) for part in ("first_name", "last_name") if value.get(part))
    return name or str(value.get("name") or ""), str(value.get("username") or "")


def _dialog(message: Any) -> int | None:
    """The dialog a message (or the message under a button) is in; None in a group chat or a channel."""
    recipient = message.get("recipient") if isinstance(message, dict) else None
    if not isinstance(recipient, dict):
        raise BadUpdate("a message without its recipient")
    if recipient.get("chat_type") != "dialog":
        return None
    chat = _int(recipient.get("chat_id"))
    if chat is None:
        raise BadUpdate("a message without chat_id")
    return chat


def phone_of(vcf: Any) -> str:
    """The first phone number (TEL) of a shared contact's vCard, "" when it has none."""
    for line in str(vcf or "").replace("\r\n", "\n").split("\n"):
        name, _, value = line.partition(":")
        if name.split(";", 1)[0].strip().upper() == "TEL" and value.strip():
            return value.strip()
    return ""


def _message(payload: dict[str, Any]) -> Incoming | None:
    message = payload.get("message")
    if not isinstance(message, dict):
        raise BadUpdate("message_created without a message")
    chat = _dialog(message)
    sender = message.get("sender")
    if chat is None or sender is None or (isinstance(sender, dict) and sender.get("is_bot")):
        return None  # a group chat, a channel's post, another bot
    name, username = _user(sender)
    body = message.get("body")
    mid = body.get("mid") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(mid, str) or not mid:
        raise BadUpdate("a message without its mid")

    def read(kind: Kind, *, text: str = "", phone: str = "", what: str = "") -> Incoming:
        return Incoming(event_id=event_key(mid), chat_id=str(chat), kind=kind, name=name, username=username,
                        text=text, phone=phone, what=what)

    text, attachments = body.get("text"), body.get("attachments")
    if isinstance(text, str) and text.strip():
        return read("start") if text.split()[0] == "/start" else read("text", text=text)
    items = [item for item in attachments if isinstance(item, dict)] if isinstance(attachments, list) else []
    for item in items:
        contact = item.get("payload") if item.get("type") == "contact" else None
        phone = phone_of(contact.get("vcf_info")) if isinstance(contact, dict) else ""
        if phone:
            return read("contact", phone=phone)
    return read("not_text", what=next((NOT_TEXT[str(item.get("type"))] for item in items
                                       if item.get("type") in NOT_TEXT), "file"))


def _press(payload: dict[str, Any]) -> Incoming | None:
    callback = payload.get("callback")
    press = callback.get("callback_id") if isinstance(callback, dict) else None
    if not isinstance(callback, dict) or not isinstance(press, str) or not press:
        raise BadUpdate("message_callback without its callback_id")
    name, username = _user(callback.get("user"))
    message = payload.get("message")
    if message is None:  # the message under the button was deleted: its dialog is unknown
        return None
    chat = _dialog(message)
    if chat is None:
        return None
    data = callback.get("payload")
    return Incoming(event_id=event_key(f"cb:{press}"), chat_id=str(chat), kind="button", name=name,
                    username=username, data=data if isinstance(data, str) else "", query_id=press)


def _started_or_stopped(payload: dict[str, Any], kind: str) -> Incoming:
    chat = _int(payload.get("chat_id"))
    if chat is None:
        raise BadUpdate(f"{kind} without chat_id")
    name, username = _user(payload.get("user"))
    key = event_key(f"{kind.removeprefix('bot_')}:{chat}:{payload['timestamp']}")
    if kind == "bot_stopped":
        return Incoming(event_id=key, chat_id=str(chat), kind="membership", name=name, username=username, blocked=True)
    start = payload.get("payload")
    return Incoming(event_id=key, chat_id=str(chat), kind="start", name=name, username=username,
                    payload=start if isinstance(start, str) else "")


def incoming(payload: Any) -> Incoming | None:
    """What an update means to Spravka, or None for one it ignores (an edit, a group chat).
    BadUpdate when it is not a MAX update at all."""
    if not isinstance(payload, dict) or not isinstance(payload.get("update_type"), str):
        raise BadUpdate("no update_type")
    if _int(payload.get("timestamp")) is None:
        raise BadUpdate("no timestamp")
    kind = payload["update_type"]
    if kind == "message_created":
        return _message(payload)
    if kind == "message_callback":
        return _press(payload)
    if kind in ("bot_started", "bot_stopped"):
        return _started_or_stopped(payload, kind)
    return None
