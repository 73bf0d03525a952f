"""A local fake of the MAX Bot API, and builders of the updates MAX posts to a webhook.

A real HTTP server on 127.0.0.1 (a free port) that messengers/max_bot.py talks to over httpx, as it
talks to MAX: REST paths under `{url}`, the bot's token in the `Authorization` header, JSON bodies
and answers. It records every call, failed ones too, and answers as MAX does: 200 with the result,
or an HTTP error with `{"code", "message"}`.

Tokens: `add_bot(token, user_id, username, name)` registers a bot; a call without the header, or with
a token it does not know, answers 401 `verify.token` (a token in the query string is not read: MAX
no longer takes it there).

Calls (each recorded under its name, `"POST /messages"`…):
- `GET /me`: the bot;
- `POST /subscriptions` {url, update_types, secret}: one subscription per url, the secret as MAX
  checks it (5–256 of A-Z, a-z, 0-9, «_», «-»), an https url; `GET /subscriptions`,
  `DELETE /subscriptions?url=`;
- `POST /messages?chat_id=|user_id=` {text, format, attachments, notify}: a text of at most 4000
  characters, `format` html or markdown, inline keyboards checked (button types, a text of 1–128
  characters, a link's http(s) url, a callback's payload of at most 1024, at most 30 rows of 7);
  answers the message with a `mid` of its own;
- `POST /answers?callback_id=` {notification?, message?}; `POST /chats/{chat_id}/actions` {action}.
Anything else answers 404.

Switches, from the test's thread:
- `block(chat_id)` / `unblock(chat_id)`: messages and actions to that chat answer 403
  `chat.denied` («error.dialog.suspended»), as for a user who stopped the bot;
- `fail_next(name, status=503, code=..., times=1, retry_after=None)`: the next calls of that name
  answer `status` (429 with a `Retry-After` header when `retry_after` is given);
- `refuse_subscription(message)`: POST /subscriptions answers 200 `{"success": false, message}`;
- `down(status=502)` / `up()`: every call answers that status with an HTML page, until `up()`;
- `delay(seconds)`: wait before every answer (longer than the client's timeout = a timeout).
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

MAX_TEXT = 4000
MAX_BUTTON_TEXT = 128
MAX_PAYLOAD = 1024
MAX_URL = 2048
MAX_ROWS = 30
MAX_IN_ROW = 7
BUTTON_TYPES = frozenset({"callback", "link", "request_contact", "request_geo_location", "chat", "message",
                          "open_app", "clipboard"})
ACTIONS = frozenset({"typing_on", "sending_photo", "sending_video", "sending_audio", "sending_file", "mark_seen"})
SECRET = re.compile(r"[\w-]{5,256}")
CHAT_ACTIONS = re.compile(r"/chats/(-?\d+)/actions")


@dataclass
class Call:
    token: str
    name: str  # «POST /messages», «POST /chats/{chat_id}/actions»…
    query: dict[str, str]
    body: Any
    at: float  # time.monotonic() when it arrived
    headers: dict[str, str]  # names in lower case
    status: int = 200  # the HTTP status it was answered with
    code: str = ""  # MAX's error code, when it answered one

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.code

    @property
    def params(self) -> dict[str, Any]:
        """The query and the JSON body together."""
        return dict(self.query) | (self.body if isinstance(self.body, dict) else {})


@dataclass
class Answer:
    status: int
    body: Any = None
    text: str = ""  # a page that is not JSON (down())
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Fault:
    status: int
    code: str
    message: str
    retry_after: float | None = None


@dataclass
class Bot:
    me: dict[str, Any]
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)  # url -> subscription


def failed(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, {"code": code, "message": message}, headers=headers or {})


class FakeMax:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._bots: dict[str, Bot] = {}
        self._blocked: set[str] = set()
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._refusal: str | None = None
        self._down: int | None = None
        self._delay = 0.0
        self._seq = itertools.count(116_000_000_000_000_000)
        self.calls: list[Call] = []
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._http.block_on_close = False
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base for `settings.MAX_API_BASE`: calls go to `{url}/messages`…"""
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> FakeMax:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    # --- set-up and switches -------------------------------------------------------------------------

    def add_bot(self, token: str, user_id: int = 229000001, username: str = "spravka_shop_bot",
                name: str = "Справка магазина") -> dict[str, Any]:
        """Registers a bot's token; returns what GET /me answers for it."""
        me = {"user_id": user_id, "first_name": name, "username": username, "is_bot": True,
              "last_activity_time": int(time.time() * 1000), "name": name}
        with self._lock:
            self._bots[token] = Bot(me)
        return me

    def block(self, chat_id: int | str) -> None:
        with self._lock:
            self._blocked.add(str(chat_id))

    def unblock(self, chat_id: int | str) -> None:
        with self._lock:
            self._blocked.discard(str(chat_id))

    def fail_next(self, name: str, status: int = 503, code: str = "", times: int = 1, message: str = "",
                  retry_after: float | None = None) -> None:
        """The next `times` calls of `name` («POST /messages»…) answer `status`."""
        code = code or {429: "too.many.requests", 400: "proto.payload"}.get(status, "internal.error")
        with self._lock:
            self._faults[name].extend(Fault(status, code, message or f"Error {status}", retry_after)
                                      for _ in range(times))

    def refuse_subscription(self, message: str | None) -> None:
        with self._lock:
            self._refusal = message

    def down(self, status: int = 502) -> None:
        with self._lock:
            self._down = status

    def up(self) -> None:
        with self._lock:
            self._down = None

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    # --- what arrived ----------------------------------------------------------------------------------

    def subscriptions(self, token: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            bot = self._bots.get(token)
            return dict(bot.subscriptions) if bot is not None else {}

    def calls_of(self, name: str, chat_id: int | str | None = None) -> list[Call]:
        with self._lock:
            return self._matching(name, chat_id)

    def wait_for(self, name: str, count: int = 1, timeout: float = 5.0, chat_id: int | str | None = None) -> list[Call]:
        """The calls of `name` (to `chat_id`) once there are `count` of them; AssertionError listing
        what did arrive after `timeout` seconds."""
        with self._arrived:
            if self._arrived.wait_for(lambda: len(self._matching(name, chat_id)) >= count, timeout):
                return self._matching(name, chat_id)
            arrived = [f"{call.name}({call.params}) -> {call.code or call.status}" for call in self.calls]
        to = "" if chat_id is None else f" to chat {chat_id}"
        raise AssertionError(f"expected {count} {name} call(s){to} within {timeout}s; arrived: {arrived or 'none'}")

    def sent(self, chat_id: int | str) -> list[Call]:
        """The POST /messages calls that showed a message in the chat (not failed ones)."""
        return [call for call in self.calls_of("POST /messages", chat_id) if call.ok]

    def sent_texts(self, chat_id: int | str) -> list[str]:
        return [call.body.get("text", "") for call in self.sent(chat_id)]

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()

    def _matching(self, name: str, chat_id: int | str | None) -> list[Call]:
        return [call for call in self.calls if call.name == name
                and (chat_id is None or str(call.query.get("chat_id", call.query.get("user_id"))) == str(chat_id))]

    # --- answering -------------------------------------------------------------------------------------

    def _handle(self, verb: str, path: str, query: dict[str, str], raw: bytes, headers: dict[str, str]) -> Answer:
        arrived = time.monotonic()
        found = CHAT_ACTIONS.fullmatch(path)
        name = f"{verb} /chats/{{chat_id}}/actions" if found else f"{verb} {path}"
        if found:
            query = query | {"chat_id": found.group(1)}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self._lock:
            call = Call(headers.get("authorization", ""), name, query, body, arrived, headers)
            answer = self._answer(call)
            call.status = answer.status
            if isinstance(answer.body, dict) and answer.status != 200:
                call.code = str(answer.body.get("code", ""))
            self.calls.append(call)
            self._arrived.notify_all()
            delay = self._delay
        if delay > 0:
            self._stopping.wait(delay)
        return answer

    def _answer(self, call: Call) -> Answer:
        """Under the lock: the first fault that applies, else the call's result."""
        if self._down is not None:
            return Answer(self._down, text=f"<html><body><h1>{self._down}</h1>nginx</body></html>")
        bot = self._bots.get(call.token)
        if bot is None:
            return failed(401, "verify.token", "Invalid access_token")
        faults = self._faults.get(call.name)
        if faults:
            fault = faults.popleft()
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            return failed(fault.status, fault.code, fault.message, headers)
        run = ROUTES.get(call.name)
        if run is None:
            return failed(404, "not.found", f"Path {call.name} is not recognized")
        if call.name.startswith("POST") and not isinstance(call.body, dict):
            return failed(400, "proto.payload", "Invalid JSON body")
        return run(self, call, bot)

    def _me(self, call: Call, bot: Bot) -> Answer:
        return Answer(200, bot.me)

    def _subscribe(self, call: Call, bot: Bot) -> Answer:
        body = call.body
        url, secret = str(body.get("url", "")), body.get("secret")
        if not url.startswith("https://"):
            return failed(400, "proto.payload", "url: only https is supported")
        if secret is not None and not (isinstance(secret, str) and SECRET.fullmatch(secret)):
            return failed(400, "proto.payload", "secret: must match ^[\\w-]{5,256}$")
        if self._refusal is not None:
            return Answer(200, {"success": False, "message": self._refusal})
        bot.subscriptions[url] = {"url": url, "time": int(time.time() * 1000), "secret": secret,
                                  "update_types": body.get("update_types"), "version": body.get("version")}
        return Answer(200, {"success": True})

    def _subscriptions(self, call: Call, bot: Bot) -> Answer:
        shown = [{key: value for key, value in item.items() if key != "secret"} for item in bot.subscriptions.values()]
        return Answer(200, {"subscriptions": shown})

    def _unsubscribe(self, call: Call, bot: Bot) -> Answer:
        url = call.query.get("url", "")
        if not url:
            return failed(400, "proto.payload", "url is required")
        removed = bot.subscriptions.pop(url, None)
        return Answer(200, {"success": removed is not None} | ({} if removed else {"message": "No subscription"}))

    def _send(self, call: Call, bot: Bot) -> Answer:
        chat = call.query.get("chat_id") or call.query.get("user_id")
        if not chat or not chat.lstrip("-").isdigit():
            return failed(400, "proto.payload", "chat_id or user_id is required")
        body = call.body
        text = body.get("text")
        if text is not None and (not isinstance(text, str) or len(text) > MAX_TEXT):
            return failed(400, "proto.payload", f"text: size must be between 0 and {MAX_TEXT}")
        if body.get("format") not in (None, "html", "markdown"):
            return failed(400, "proto.payload", "format: unknown")
        problem = _attachments_problem(body.get("attachments"))
        if problem:
            return failed(400, "proto.payload", problem)
        if chat in self._blocked:
            return failed(403, "chat.denied", f"Key: error.dialog.suspended, args: [{chat},].")
        mid = f"mid.{secrets.token_hex(16)}"
        message = {"sender": bot.me, "recipient": {"chat_id": int(chat), "chat_type": "dialog"},
                   "timestamp": int(time.time() * 1000),
                   "body": {"mid": mid, "seq": next(self._seq), "text": text, "attachments": body.get("attachments")}}
        return Answer(200, {"message": message})

    def _answer_callback(self, call: Call, bot: Bot) -> Answer:
        if not call.query.get("callback_id", "").strip():
            return failed(400, "proto.payload", "callback_id is required")
        return Answer(200, {"success": True})

    def _action(self, call: Call, bot: Bot) -> Answer:
        if call.body.get("action") not in ACTIONS:
            return failed(400, "proto.payload", "action: unknown")
        if call.query["chat_id"] in self._blocked:
            return failed(403, "chat.denied", "Key: error.dialog.suspended")
        return Answer(200, {"success": True})


ROUTES = {
    "GET /me": FakeMax._me,
    "POST /subscriptions": FakeMax._subscribe,
    "GET /subscriptions": FakeMax._subscriptions,
    "DELETE /subscriptions": FakeMax._unsubscribe,
    "POST /messages": FakeMax._send,
    "POST /answers": FakeMax._answer_callback,
    "POST /chats/{chat_id}/actions": FakeMax._action,
}


def _attachments_problem(attachments: Any) -> str:
    """What MAX would refuse in a message's attachments (only inline keyboards are sent here)."""
    if attachments is None:
        return ""
    if not isinstance(attachments, list):
        return "attachments: not a list"
    for item in attachments:
        if not isinstance(item, dict) or item.get("type") != "inline_keyboard":
            return "attachments: only inline_keyboard is expected"
        rows = (item.get("payload") or {}).get("buttons")
        if not isinstance(rows, list) or not rows or len(rows) > MAX_ROWS:
            return "buttons: 1 to 30 rows"
        for row in rows:
            if not isinstance(row, list) or not 0 < len(row) <= MAX_IN_ROW:
                return "buttons: 1 to 7 in a row"
            problem = next((found for found in map(_button_problem, row) if found), "")
            if problem:
                return problem
    return ""


def _button_problem(button: Any) -> str:
    if not isinstance(button, dict) or button.get("type") not in BUTTON_TYPES:
        return "button: unknown type"
    if not isinstance(button.get("text"), str) or not 0 < len(button["text"]) <= MAX_BUTTON_TEXT:
        return "button: text of 1 to 128 characters"
    url = button.get("url")
    if button["type"] == "link" and not (isinstance(url, str) and url.startswith(("http://", "https://"))
                                         and len(url) <= MAX_URL):
        return "button: a link needs an http(s) url"
    payload = button.get("payload")
    if button["type"] == "callback" and not (isinstance(payload, str) and len(payload) <= MAX_PAYLOAD):
        return "button: a callback needs a payload of at most 1024 characters"
    return ""


# --- HTTP -------------------------------------------------------------------------------------------------


def _handler_for(fake: FakeMax) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeMax

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, verb: str) -> None:
        self.close_connection = True
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        url = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = self.server_fake._handle(verb, unquote(url.path), dict(parse_qsl(url.query)), raw, headers)
        try:
            self._send(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, answer: Answer) -> None:
        if answer.body is not None:
            data, kind = json.dumps(answer.body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8"
        else:
            data, kind = answer.text.encode("utf-8"), "text/html; charset=utf-8"
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)


# --- updates, as MAX posts them to a webhook --------------------------------------------------------------

BOT_USER_ID = 229000001


def now_ms() -> int:
    return int(time.time() * 1000)


def user(user_id: int, first_name: str = "Анна", last_name: str | None = "Петрова",
         username: str | None = None) -> dict[str, Any]:
    shown: dict[str, Any] = {"user_id": user_id, "first_name": first_name, "is_bot": False,
                             "last_activity_time": now_ms(), "name": " ".join(filter(None, (first_name, last_name)))}
    if last_name:
        shown["last_name"] = last_name
    if username:
        shown["username"] = username
    return shown


def new_mid() -> str:
    """A message id as MAX makes them: «mid.» and 32 hexadecimal characters."""
    return f"mid.{secrets.token_hex(16)}"


def message_created(chat_id: int, text: str | None, *, user_id: int | None = None, mid: str | None = None,
                    attachments: list[dict[str, Any]] | None = None, chat_type: str = "dialog",
                    sender: dict[str, Any] | None = None, **names: Any) -> dict[str, Any]:
    """A message from a user to the bot in their dialog (`names`: first_name, last_name, username)."""
    who = user_id if user_id is not None else chat_id + 1000
    body: dict[str, Any] = {"mid": mid or new_mid(), "seq": int(time.time() * 1000) << 16, "text": text}
    if attachments is not None:
        body["attachments"] = attachments
    message = {"sender": sender if sender is not None else user(who, **names),
               "recipient": {"chat_id": chat_id, "chat_type": chat_type, "user_id": BOT_USER_ID},
               "timestamp": now_ms(), "body": body}
    return {"update_type": "message_created", "timestamp": now_ms(), "message": message, "user_locale": "ru"}


def bot_started(chat_id: int, *, user_id: int | None = None, payload: str | None = None,
                timestamp: int | None = None, **names: Any) -> dict[str, Any]:
    """The user pressed «Начать» (or came back after stopping the bot)."""
    update = {"update_type": "bot_started", "timestamp": timestamp or now_ms(), "chat_id": chat_id,
              "user": user(user_id if user_id is not None else chat_id + 1000, **names), "user_locale": "ru"}
    return update | ({"payload": payload} if payload is not None else {})


def bot_stopped(chat_id: int, *, user_id: int | None = None, timestamp: int | None = None) -> dict[str, Any]:
    """The user stopped (blocked) the bot."""
    return {"update_type": "bot_stopped", "timestamp": timestamp or now_ms(), "chat_id": chat_id,
            "user": user(user_id if user_id is not None else chat_id + 1000), "user_locale": "ru"}


def message_callback(chat_id: int, payload: str, *, user_id: int | None = None, callback_id: str | None = None,
                     text: str = "К сожалению, точного ответа у меня нет.") -> dict[str, Any]:
    """A press on a callback button under the bot's message in the dialog."""
    who = user_id if user_id is not None else chat_id + 1000
    callback = {"timestamp": now_ms(), "callback_id": callback_id or secrets.token_urlsafe(90), "payload": payload,
                "user": user(who)}
    message = {"sender": {"user_id": BOT_USER_ID, "first_name": "Справка магазина", "is_bot": True},
               "recipient": {"chat_id": chat_id, "chat_type": "dialog", "user_id": who},
               "timestamp": now_ms(), "body": {"mid": new_mid(), "seq": 1, "text": text}}
    return {"update_type": "message_callback", "timestamp": now_ms(), "callback": callback, "message": message,
            "user_locale": "ru"}


def image() -> dict[str, Any]:
    return {"type": "image", "payload": {"photo_id": 4242, "token": secrets.token_hex(8),
                                         "url": "https://i.oneme.example/i?r=photo"}}


def sticker() -> dict[str, Any]:
    return {"type": "sticker", "payload": {"url": "https://i.oneme.example/getSmile?smileId=7", "code": "7"},
            "width": 128, "height": 128}


def audio() -> dict[str, Any]:
    """A voice message: MAX sends it as audio."""
    return {"type": "audio", "payload": {"url": "https://vd.oneme.example/audio.ogg", "token": secrets.token_hex(8)}}


def document(name: str = "rekvizity.pdf") -> dict[str, Any]:
    return {"type": "file", "payload": {"url": f"https://fd.oneme.example/{name}", "token": secrets.token_hex(8)},
            "filename": name, "size": 52000}


def contact(phone: str, *, user_id: int | None = None, name: str = "Анна Петрова") -> dict[str, Any]:
    """A shared contact, as the request_contact button sends it: a vCard with the phone."""
    vcf = f"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:{name}\r\nTEL;TYPE=cell:{phone}\r\nEND:VCARD\r\n"
    payload: dict[str, Any] = {"vcf_info": vcf}
    if user_id is not None:
        payload["max_info"] = user(user_id)
    return {"type": "contact", "payload": payload}
