"""VK (ВКонтакте): a community's messages. Events come through the Callback API, calls go out to the
VK API over httpx.

Why plain httpx and not the `vk_api` package: vk_api (the most used synchronous library) posts
every call to a hard-coded `https://api.vk.ru/method/…`, with no supported way to point it at
another address, so neither a proxy nor the tests' fake (tests/fakes/vk_api.py) could be used
without patching it. It would also bring `requests`, sleep to keep three calls a second under a
process-wide lock and retry error 6 by itself, where Spravka's deliveries retry with their own
backoff (messengers/delivery.py). What Spravka needs is a handful of VK's documented REST methods:
`POST {VK_API_BASE}/method/{name}` with form fields, `v` (VK_API_VERSION) and the community's
`access_token` in the body (never in the URL, so it stays out of logs); httpx is pinned already.

VK answers HTTP 200 either way: `{"response": …}` or `{"error": {"error_code": N, "error_msg": …}}`.
`call` maps the codes onto messengers.exceptions: 5 (authorization failed) → BadToken; 901 (the user
has not allowed the community's messages) and 902 (their privacy settings) → Blocked; 1 (unknown
error), 6 (too many requests per second), 9 (flood control), 10 (internal error), HTTP 429 and 5xx,
timeouts → SendFailed that may be retried (VK gives no retry_after: the delivery's backoff waits);
any other code → SendFailed for good (912, a keyboard in a community with bot features off, is
first tried again without the keyboard). A failure's `status` is VK's error code, or the HTTP status
when VK did not answer with JSON.

Events: the Callback API posts `{"type", "group_id", "event_id", "secret", "object", "v"}`. The
handshake (`confirmation`) is answered with the community's confirmation code as plain text,
every other event with plain `ok` (messengers/views.py). Read here: `message_new` (a text, «Начать»,
an attachment), `message_event` (a press on a callback button, acknowledged with
messages.sendMessageEventAnswer), `message_deny` / `message_allow` (the user forbade or allowed the
community's messages: the chat is blocked or unblocked); other events are acknowledged and ignored.

VK shows no markup in messages: the text goes as it is, only VK's mention syntax ([id1|…], @id1,
*id1) is broken with an invisible word joiner, so nothing a visitor, an operator or a page wrote
becomes a link or a mention. Nothing here touches the database. This module is a transport
(messengers/transports.py): it offers the same functions as telegram.py and max_bot.py.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
from typing import Any, Final

import httpx
from django.conf import settings
from django.utils.translation import gettext_noop

from messengers.exceptions import BadToken, BadUpdate, Blocked, SendFailed
from messengers.incoming import OPERATOR, Incoming, Kind
from messengers.outgoing import Outgoing, split

logger = logging.getLogger("spravka.messengers")

VK_API_VERSION: Final = "5.199"
MAX_TEXT: Final = 4096  # messages.send's limit, in characters
TEXT_MARGIN: Final = 900  # an operator's name, the request for a phone with its consent, five product lines
MAX_LABEL: Final = 40  # a keyboard button's label
OPERATOR_PAYLOAD: Final = json.dumps({"cmd": OPERATOR}, separators=(",", ":"))  # «Позвать оператора»
CHATS_FROM: Final = 2_000_000_000  # peer ids from here on are group conversations, not visitors
BAD_TOKEN_CODES: Final = frozenset({5})
BLOCKED_CODES: Final = frozenset({901, 902})
RETRY_CODES: Final = frozenset({1, 6, 9, 10})
NO_BOT_FEATURES: Final = 912  # «Возможности ботов» are off in the community: no keyboards
NOT_TEXT: Final = {  # attachment types, as the inbox names them
    "photo": "photo", "graffiti": "photo", "video": "video", "audio": "audio", "audio_message": "voice",
    "sticker": "sticker", "doc": "file",
}
TOKEN_REFUSED: Final = gettext_noop(
    "ВКонтакте больше не принимает ключ доступа сообщества: подключите сообщество заново.")
# VK's mentions in a message: [id1|Имя], [club1|…], [https://vk.com/…|…]; @id1, @durov, *id1.
MENTION: Final = re.compile(r"\[(?=[^\[\]|\s]+\|)|(?<![\w@.])@(?=\w)|(?<![\w*])\*(?=(?:id|club|public|event)\d)")
WORD_JOINER: Final = "\u2060"
EVENT_KEY: Final = re.compile(r"[A-Za-z0-9_-]{1,40}")


# ----- calls out ----------------------------------------------------------------------------------


def _form(params: dict[str, Any]) -> dict[str, str]:
    """Form fields: objects and arrays (a keyboard) as JSON, booleans as 1/0, the rest as text."""
    form: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, dict | list):
            form[key] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        elif isinstance(value, bool):
            form[key] = "1" if value else "0"
        else:
            form[key] = str(value)
    return form


def _failure(method: str, error: dict[str, Any]) -> Exception:
    """VK's error as one of ours: blocked, a bad token, try later, or a permanent refusal."""
    code = error.get("error_code")
    code = code if isinstance(code, int) and not isinstance(code, bool) and 0 <= code < 32768 else 0
    text = f"{method}: VK error {code}: {str(error.get('error_msg', ''))[:300]}"
    if code in BAD_TOKEN_CODES:
        return BadToken(text)
    if code in BLOCKED_CODES:
        return Blocked(text)
    return SendFailed(text, status=code, retryable=code in RETRY_CODES)


def call(token: str, method: str, params: dict[str, Any]) -> Any:
    """One VK API method with JSON-able parameters; its `response`, or our exception. A message
    whose keyboard VK refuses because the community has bot features off (912) is sent again
    without it, its links written into the text: the visitor gets the answer all the same."""
    try:
        return _call(token, method, params)
    except SendFailed as exc:
        if exc.status != NO_BOT_FEATURES or method != "messages.send" or "keyboard" not in params:
            raise
    logger.warning("the community has bot features off: a message is sent without its buttons")
    plain = {key: value for key, value in params.items() if key != "keyboard"}
    links = _links(params["keyboard"])
    if links:
        plain["message"] = f"{params.get('message', '')}\n\n{links}"
    return _call(token, method, plain)


def call_many(token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Several calls, one after another (VK takes 20 a second from a community): for each, its
    result or our exception, in order."""
    results: list[Any] = []
    for method, params in calls:
        try:
            results.append(call(token, method, params))
        except (Blocked, BadToken, SendFailed) as exc:
            results.append(exc)
    return results


def _links(keyboard: Any) -> str:
    """The link buttons of a keyboard as lines of text."""
    rows = keyboard.get("buttons") if isinstance(keyboard, dict) else None
    actions = [button.get("action") or {} for row in rows or [] for button in row if isinstance(button, dict)]
    return "\n".join(f"• {_literal(str(action.get('label', '')))}: {action.get('link')}" for action in actions
                     if isinstance(action, dict) and action.get("type") == "open_link")


def _call(token: str, method: str, params: dict[str, Any]) -> Any:
    form = _form(params) | {"access_token": token, "v": VK_API_VERSION}
    try:
        answer = httpx.post(f"{settings.VK_API_BASE}/method/{method}", data=form,
                            timeout=settings.MESSENGER_TIMEOUT)
    except httpx.HTTPError as exc:  # a timeout, a refused or dropped connection
        raise SendFailed(f"{method}: {type(exc).__name__}: {exc}"[:500], status=None, retryable=True) from exc
    if answer.status_code != 200:
        raise SendFailed(f"{method}: HTTP {answer.status_code}", status=answer.status_code,
                         retryable=answer.status_code == 429 or answer.status_code >= 500)
    try:
        body = answer.json()
    except ValueError as exc:
        raise SendFailed(f"{method}: the answer is not JSON", status=200, retryable=True) from exc
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        raise _failure(method, body["error"])
    if not isinstance(body, dict) or "response" not in body:
        raise SendFailed(f"{method}: no response in the answer", status=200, retryable=True)
    return body["response"]


def community(token: str) -> tuple[str, str]:
    """(id, name) of the community the token belongs to (groups.getById without a group: the
    token's own). BadToken when VK does not know the token; SendFailed that may not be retried when
    it is not a community's token (a user's token is asked for group_ids: error 100)."""
    answer = call(token, "groups.getById", {})
    groups = answer.get("groups") if isinstance(answer, dict) else answer  # an object since 5.139, a list before
    first = groups[0] if isinstance(groups, list) and groups else None
    if not isinstance(first, dict) or not isinstance(first.get("id"), int):
        raise SendFailed("groups.getById: no community for this token", status=None, retryable=False)
    return str(first["id"]), str(first.get("name") or "")


def forget(token: str, url: str) -> None:
    """Disconnecting: nothing to call. The Callback API server stays in the community's settings
    until the owner removes it; what it still posts is acknowledged and ignored."""


def _literal(text: str) -> str:
    return MENTION.sub(lambda found: found.group(0) + WORD_JOINER, text)


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1].rstrip() + "…"


def _text(shown: Outgoing, *, last: bool) -> str:
    text = _literal(shown.text)
    if shown.author:
        text = f"{_literal(shown.author)}:\n{text}"
    if not last:
        return text
    if shown.contact_button and shown.contact_prompt:  # VK has no button that shares a phone: it is typed
        text = f"{text}\n\n{_literal(shown.contact_prompt)}"
    if shown.consent:
        text = f"{text}\n\n{_literal(shown.consent)}"
    if shown.cards:
        text = text + "\n\n" + "\n".join(f"• {_literal(card.title)}: {card.url}" for card in shown.cards)
    return text


def _keyboard(shown: Outgoing) -> dict[str, Any] | None:
    rows: list[list[dict[str, Any]]] = [
        [{"action": {"type": "open_link", "link": link.url, "label": _label(link.title)}}] for link in shown.links]
    if shown.operator_button:
        rows.append([{"action": {"type": "callback", "label": _label(shown.operator_button),
                                 "payload": OPERATOR_PAYLOAD}}])
    return {"inline": True, "buttons": rows} if rows else None


def random_id() -> int:
    """messages.send's random_id (int32): VK sends a message once per id, so a retried call whose
    first attempt did arrive is not shown twice. Made with the call and stored with it."""
    return secrets.randbelow(2**31 - 2) + 1


def calls(chat_id: str, shown: Outgoing) -> list[tuple[str, dict[str, Any]]]:
    """The messages.send calls that show `shown`: plain text in parts under VK's 4096 characters
    (the margin leaves room for the author's name, the request for a phone and the product list),
    the buttons (source pages, «Позвать оператора») as an inline keyboard under the last part; each
    with a random_id of its own."""
    parts = split(shown.text, MAX_TEXT - TEXT_MARGIN) or [""]
    made: list[tuple[str, dict[str, Any]]] = []
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        piece = Outgoing(text=part, author=shown.author if number == 0 else "", cards=shown.cards,
                         contact_button=shown.contact_button, contact_prompt=shown.contact_prompt,
                         consent=shown.consent)
        params: dict[str, Any] = {
            "peer_id": int(chat_id), "random_id": random_id(), "message": _text(piece, last=last),
            "dont_parse_links": 1, "disable_mentions": 1,
        }
        keyboard = _keyboard(shown) if last else None
        if keyboard is not None:
            params["keyboard"] = keyboard
        made.append(("messages.send", params))
    return made


def typing(token: str, chat_id: str) -> None:
    """«печатает…» while the answer is made: a courtesy, so a failure is ignored."""
    try:
        call(token, "messages.setActivity", {"peer_id": chat_id, "type": "typing"})
    except (SendFailed, Blocked, BadToken):
        pass


def button_answered(token: str, read: Incoming) -> None:
    """Stop the callback button's spinner (messages.sendMessageEventAnswer): a courtesy too. A text
    button (older apps) has nothing to answer."""
    if not read.query_id:
        return
    try:
        call(token, "messages.sendMessageEventAnswer",
             {"event_id": read.query_id, "user_id": read.chat_id, "peer_id": read.chat_id})
    except (SendFailed, Blocked, BadToken):
        pass


def profile(token: str, chat_id: str) -> tuple[str, str]:
    """The user's name and screen name (users.get), asked once per new chat: VK's events carry only
    an id. ("", "") when VK does not say."""
    try:
        users = call(token, "users.get", {"user_ids": chat_id, "fields": "screen_name"})
    except (SendFailed, Blocked, BadToken):
        return "", ""
    user = users[0] if isinstance(users, list) and users and isinstance(users[0], dict) else {}
    if user.get("deactivated"):
        return "", ""
    name = " ".join(str(user[part]) for part in ("first_name", "last_name") if user.get(part))
    return name, str(user.get("screen_name") or "")


# ----- events in ----------------------------------------------------------------------------------


def secret_in(payload: Any) -> str:
    """The Callback API's `secret`, sent in the body of every event (the handshake too)."""
    secret = payload.get("secret") if isinstance(payload, dict) else None
    return secret if isinstance(secret, str) else ""


def account_in(payload: Any) -> str:
    """The community the event is for (`group_id`)."""
    group = payload.get("group_id") if isinstance(payload, dict) else None
    return str(group) if isinstance(group, int) and not isinstance(group, bool) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _payload(value: Any) -> dict[str, Any]:
    """A button's payload: an object in message_event, a JSON string in message_new."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def event_key(event_id: str) -> str:
    """VK's event_id as stored (at most 40 characters of a safe alphabet; a digest otherwise)."""
    if EVENT_KEY.fullmatch(event_id):
        return event_id
    return "h" + hashlib.sha256(event_id.encode("utf-8", "surrogatepass")).hexdigest()[:39]


def _message(key: str, event: dict[str, Any]) -> Incoming | None:
    message = event.get("message")
    if not isinstance(message, dict):
        raise BadUpdate("message_new without a message")
    peer, sender = _int(message.get("peer_id")), _int(message.get("from_id"))
    if peer is None or sender is None:
        raise BadUpdate("a message without peer_id or from_id")
    if peer >= CHATS_FROM or peer <= 0 or sender <= 0 or message.get("out") == 1:
        return None  # group conversations, communities and the community's own messages are not visitors
    text = message.get("text")
    text = text if isinstance(text, str) else ""

    def read(kind: Kind, *, text: str = "", data: str = "", what: str = "") -> Incoming:
        return Incoming(event_id=key, chat_id=str(peer), kind=kind, text=text, data=data, what=what)

    pressed = _payload(message.get("payload"))
    if pressed.get("cmd") == OPERATOR:  # a text button: an app without callback buttons sent its label
        return read("button", data=OPERATOR)
    if pressed.get("command") == "start":  # «Начать» under an empty dialog
        return read("start")
    if text.strip():
        return read("text", text=text)
    attachments = message.get("attachments")
    attachments = attachments if isinstance(attachments, list) else []
    types = [item.get("type") for item in attachments if isinstance(item, dict)]
    what = next((NOT_TEXT[kind] for kind in types if kind in NOT_TEXT), "location" if message.get("geo") else "file")
    return read("not_text", what=what)


def _press(key: str, event: dict[str, Any]) -> Incoming | None:
    peer, user, press = _int(event.get("peer_id")), _int(event.get("user_id")), event.get("event_id")
    if peer is None or user is None or not isinstance(press, str):
        raise BadUpdate("message_event without peer_id, user_id or event_id")
    if peer >= CHATS_FROM or peer <= 0:
        return None
    data = _payload(event.get("payload")).get("cmd")
    return Incoming(event_id=key, chat_id=str(peer), kind="button", data=str(data or ""), query_id=press)


def incoming(payload: Any) -> Incoming | None:
    """What an event means to Spravka, or None for one it ignores (a wall post, a group chat).
    BadUpdate when it is not a Callback API event at all."""
    if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
        raise BadUpdate("no type")
    kind = payload["type"]
    if kind == "confirmation":
        return Incoming(event_id="", chat_id="", kind="confirmation")
    event_id, event = payload.get("event_id"), payload.get("object")
    if not isinstance(event_id, str) or not event_id:
        raise BadUpdate("no event_id")
    if not isinstance(event, dict):
        raise BadUpdate("no object")
    key = event_key(event_id)
    if kind == "message_new":
        return _message(key, event)
    if kind == "message_event":
        return _press(key, event)
    if kind in ("message_deny", "message_allow"):
        user = _int(event.get("user_id"))
        if user is None:
            raise BadUpdate(f"{kind} without user_id")
        return Incoming(event_id=key, chat_id=str(user), kind="membership", blocked=kind == "message_deny")
    return None
