"""A local fake of the Telegram Bot API, and builders of the updates Telegram posts to a webhook.

A real HTTP server on 127.0.0.1 (a free port) that the real python-telegram-bot talks to:
`telegram.Bot(token, base_url=f"{fake.url}/bot")` sends every call to `{url}/bot{token}/{method}`.
It answers as Telegram does (`{"ok": true, "result": ...}` or `{"ok": false, "error_code": N,
"description": ..., "parameters": {...}}`) and records every call, failed ones too, so tests can
assert what was sent as well as how the client handled what came back.

Bots: `add_bot(token)` registers a token; any other token answers 401 Unauthorized (PTB raises
`InvalidToken`). Methods: getMe, setWebhook / deleteWebhook / getWebhookInfo (kept per token),
sendMessage, editMessageText, editMessageReplyMarkup (each returns a Message; message ids count up
per chat), sendChatAction, answerCallbackQuery. Any other method answers 404 "method not found".
Method names are case-insensitive, as in Telegram, and recorded as sent.

Parameters: PTB posts form fields (multipart when it uploads a file). Form values that parse as a
JSON object or array (reply_markup, allowed_updates, ...) are decoded, except free text (`text`,
`caption`, ...); every other form value stays the string that was sent ("42", "true"). A JSON body
is kept as it is. An uploaded file is recorded as `{"filename", "content_type", "data"}`.

Switches, from the test's thread:
- `block(chat_id)` / `unblock(chat_id)`: every call naming that chat answers 403 "bot was blocked
  by the user" (PTB raises `Forbidden`);
- `fail_next(method, status=500, times=1, retry_after=None, description=None)`: the next calls of
  that method fail (429 with `retry_after` -> `RetryAfter`, 400 -> `BadRequest`, 500/502 ->
  `NetworkError`);
- `down(status=500)` / `up()`: every call fails until `up()`;
- `delay(seconds)`: wait before every answer (longer than the client's read timeout = `TimedOut`);
- `webhook_error(token, message)`: getWebhookInfo reports that delivery error.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

# Form values kept as strings even when they look like JSON: what a user or the app writes.
TEXT_FIELDS = frozenset({"text", "caption", "description", "short_description", "title", "name", "url",
                         "secret_token", "callback_query_id", "inline_message_id"})
DESCRIPTIONS = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
    500: "Internal Server Error", 502: "Bad Gateway",
}
BLOCKED = "Forbidden: bot was blocked by the user"


@dataclass
class Call:
    token: str
    method: str  # as sent (Telegram's method names are case-insensitive)
    params: dict[str, Any]
    at: float  # time.monotonic() when it arrived
    headers: dict[str, str]  # names in lower case
    status: int = 200  # the HTTP status it was answered with


@dataclass
class Answer:
    status: int
    body: dict[str, Any]


@dataclass
class Fault:
    status: int
    description: str
    retry_after: int | None = None


@dataclass
class BotState:
    user: dict[str, Any]
    webhook: dict[str, Any] = field(default_factory=dict)
    last_error: tuple[int, str] | None = None  # (unix time, message), from webhook_error()


def ok(result: Any) -> Answer:
    return Answer(200, {"ok": True, "result": result})


def failure(status: int, description: str | None = None, *, retry_after: int | None = None) -> Answer:
    body: dict[str, Any] = {"ok": False, "error_code": status,
                            "description": description or DESCRIPTIONS.get(status, "Error")}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return Answer(status, body)


class _Server(ThreadingHTTPServer):
    # Connections waiting to be accepted: socketserver's 5 drops the SYNs of a client opening 20 at
    # once (a worker sending many chats' notices together), which then retries after 1 s and 3 s.
    request_queue_size = 128


class FakeTelegram:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._bots: dict[str, BotState] = {}
        self._bot_ids = itertools.count(8_000_000_001)
        self._blocked: set[str] = set()
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._down: int | None = None
        self._delay = 0.0
        self._message_ids: dict[tuple[str, str], itertools.count[int]] = {}
        self._texts: dict[tuple[str, str, int], str] = {}  # (token, chat, message_id) -> text
        self.calls: list[Call] = []
        self._http = _Server(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._http.block_on_close = False
        # A short poll, so that stop() (shutdown) returns in milliseconds rather than half a second.
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base for `settings.TELEGRAM_API_BASE`: calls go to `{url}/bot{token}/{method}`."""
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> FakeTelegram:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases handlers sleeping through a delay
        self._http.shutdown()
        self._http.server_close()

    # --- set-up and switches ---------------------------------------------------------------------------

    def add_bot(self, token: str, username: str = "spravka_test_bot", first_name: str = "Справка",
                bot_id: int | None = None) -> dict[str, Any]:
        """Registers a token; returns its bot's User (what getMe answers). The id defaults to the
        token's number before the colon, as in Telegram's tokens."""
        number = token.split(":", 1)[0]
        with self._lock:
            if bot_id is None:
                bot_id = int(number) if number.isdigit() else next(self._bot_ids)
            user = {"id": bot_id, "is_bot": True, "first_name": first_name, "username": username,
                    "can_join_groups": True, "can_read_all_group_messages": False,
                    "supports_inline_queries": False}
            self._bots[token] = BotState(user)
        return user

    def block(self, chat_id: int | str) -> None:
        with self._lock:
            self._blocked.add(str(chat_id))

    def unblock(self, chat_id: int | str) -> None:
        with self._lock:
            self._blocked.discard(str(chat_id))

    def fail_next(self, method: str, status: int = 500, times: int = 1, retry_after: int | None = None,
                  description: str | None = None) -> None:
        """The next `times` calls of `method` answer `status`; 429 with `retry_after` seconds."""
        if description is None:
            description = DESCRIPTIONS.get(status, "Error")
            if retry_after is not None:
                description = f"Too Many Requests: retry after {retry_after}"
        with self._lock:
            self._faults[method.lower()].extend(Fault(status, description, retry_after) for _ in range(times))

    def down(self, status: int = 500) -> None:
        with self._lock:
            self._down = status

    def up(self) -> None:
        with self._lock:
            self._down = None

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    def webhook_error(self, token: str, message: str) -> None:
        """getWebhookInfo reports `message` as the last delivery error, dated now."""
        with self._lock:
            self._bots[token].last_error = (int(time.time()), message)

    def webhook(self, token: str) -> dict[str, Any]:
        """What setWebhook stored for the token (url, secret_token, ...); empty when none is set."""
        with self._lock:
            return dict(self._bots[token].webhook)

    # --- what arrived ------------------------------------------------------------------------------------

    def calls_of(self, method: str, chat_id: int | str | None = None) -> list[Call]:
        with self._lock:
            return self._matching(method, chat_id)

    def wait_for(self, method: str, count: int = 1, timeout: float = 5.0,
                 chat_id: int | str | None = None) -> list[Call]:
        """The calls of `method` (to `chat_id`) once there are `count` of them; AssertionError
        listing what did arrive after `timeout` seconds."""
        with self._arrived:
            if self._arrived.wait_for(lambda: len(self._matching(method, chat_id)) >= count, timeout):
                return self._matching(method, chat_id)
            arrived = [f"{call.method}({call.params}) -> {call.status}" for call in self.calls]
        to = "" if chat_id is None else f" to chat {chat_id}"
        raise AssertionError(f"expected {count} {method} call(s){to} within {timeout}s; arrived: {arrived or 'none'}")

    def sent_texts(self, chat_id: int | str) -> list[str]:
        """The text of every successful sendMessage to the chat, in order."""
        return [call.params.get("text", "") for call in self.calls_of("sendMessage", chat_id) if call.status == 200]

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()

    def _matching(self, method: str, chat_id: int | str | None) -> list[Call]:
        return [call for call in self.calls if call.method.lower() == method.lower()
                and (chat_id is None or str(call.params.get("chat_id")) == str(chat_id))]

    # --- answering ------------------------------------------------------------------------------------

    def _handle(self, token: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> Answer:
        arrived = time.monotonic()
        with self._lock:
            answer = self._answer(token, method, params)
            self.calls.append(Call(token, method, params, arrived, headers, answer.status))
            self._arrived.notify_all()
            delay = self._delay
        if delay > 0:
            self._stopping.wait(delay)
        return answer

    def _answer(self, token: str, method: str, params: dict[str, Any]) -> Answer:
        """Under the lock: the first fault that applies, else the method's result."""
        if self._down is not None:
            return failure(self._down)
        bot = self._bots.get(token)
        if bot is None:
            return failure(401)
        faults = self._faults.get(method.lower())
        if faults:
            fault = faults.popleft()
            return failure(fault.status, fault.description, retry_after=fault.retry_after)
        if "chat_id" in params and str(params["chat_id"]) in self._blocked:
            return failure(403, BLOCKED)
        run = METHODS.get(method.lower())
        if run is None:
            return failure(404, "Not Found: method not found")
        return run(self, token, bot, params)

    def _get_me(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        return ok(bot.user)

    def _set_webhook(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        if not params.get("url"):
            return self._delete_webhook(token, bot, params)
        bot.webhook = {key: params[key] for key in ("url", "secret_token", "allowed_updates", "max_connections",
                                                    "drop_pending_updates", "ip_address") if key in params}
        return ok(True)

    def _delete_webhook(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        bot.webhook = {}
        return ok(True)

    def _get_webhook_info(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        info: dict[str, Any] = {"url": bot.webhook.get("url", ""), "has_custom_certificate": False,
                                "pending_update_count": 0}
        if "allowed_updates" in bot.webhook:
            info["allowed_updates"] = bot.webhook["allowed_updates"]
        if "max_connections" in bot.webhook:
            info["max_connections"] = int(bot.webhook["max_connections"])
        if bot.last_error is not None:
            info["last_error_date"], info["last_error_message"] = bot.last_error
        return ok(info)

    def _send_message(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        chat = str(params.get("chat_id", ""))
        if not _is_chat_id(chat):
            return failure(400, "Bad Request: chat not found")
        if not params.get("text"):
            return failure(400, "Bad Request: message text is empty")
        message_id = next(self._message_ids.setdefault((token, chat), itertools.count(1)))
        self._texts[(token, chat, message_id)] = params["text"]
        return ok(self._message(bot, chat, message_id, params))

    def _edit_message(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        """editMessageText / editMessageReplyMarkup: the edited Message (true for an inline message)."""
        if "inline_message_id" in params:
            return ok(True)
        chat = str(params.get("chat_id", ""))
        if not _is_chat_id(chat) or not str(params.get("message_id", "")).isdigit():
            return failure(400, "Bad Request: message to edit not found")
        key = (token, chat, int(params["message_id"]))
        if "text" in params:
            self._texts[key] = params["text"]
        message = self._message(bot, chat, key[2], params | {"text": self._texts.get(key)})
        return ok(message | {"edit_date": int(time.time())})

    def _true(self, token: str, bot: BotState, params: dict[str, Any]) -> Answer:
        return ok(True)

    def _message(self, bot: BotState, chat: str, message_id: int, params: dict[str, Any]) -> dict[str, Any]:
        sender = {key: bot.user[key] for key in ("id", "is_bot", "first_name", "username")}
        message: dict[str, Any] = {"message_id": message_id, "from": sender, "date": int(time.time()),
                                   "chat": {"id": int(chat), "type": "private"}}
        if params.get("text") is not None:
            message["text"] = params["text"]
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:  # only inline keyboards come back
            message["reply_markup"] = markup
        return message


METHODS: dict[str, Callable[[FakeTelegram, str, BotState, dict[str, Any]], Answer]] = {
    "getme": FakeTelegram._get_me,
    "setwebhook": FakeTelegram._set_webhook,
    "deletewebhook": FakeTelegram._delete_webhook,
    "getwebhookinfo": FakeTelegram._get_webhook_info,
    "sendmessage": FakeTelegram._send_message,
    "editmessagetext": FakeTelegram._edit_message,
    "editmessagereplymarkup": FakeTelegram._edit_message,
    "sendchataction": FakeTelegram._true,
    "answercallbackquery": FakeTelegram._true,
}


def _is_chat_id(value: str) -> bool:
    return value.removeprefix("-").isdigit()


# --- HTTP -------------------------------------------------------------------------------------------------


def _handler_for(fake: FakeTelegram) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    # Every response closes its connection, so no handler outlives a test's server.
    protocol_version = "HTTP/1.1"
    server_fake: FakeTelegram

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        self._serve(self.rfile.read(int(self.headers.get("content-length") or 0)))

    def _serve(self, raw: bytes) -> None:
        self.close_connection = True
        url = urlsplit(self.path)
        route = _route(unquote(url.path))
        if route is None:
            answer = failure(404)
        else:
            params = dict(parse_qsl(url.query)) | _parse_body(raw, self.headers.get("content-type", ""))
            headers = {name.lower(): value for name, value in self.headers.items()}
            answer = self.server_fake._handle(*route, _decoded(params), headers)
        try:
            self._send(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout)

    def _send(self, answer: Answer) -> None:
        data = json.dumps(answer.body, ensure_ascii=False).encode("utf-8")
        self.send_response(answer.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)


def _route(path: str) -> tuple[str, str] | None:
    """`/bot{token}/{method}` -> (token, method)."""
    head, _, method = path.lstrip("/").partition("/")
    if not head.startswith("bot") or not method or "/" in method:
        return None
    return head.removeprefix("bot"), method


def _parse_body(raw: bytes, content_type: str) -> dict[str, Any]:
    kind = content_type.split(";", 1)[0].strip().lower()
    if not raw:
        return {}
    if kind == "application/json":
        body = json.loads(raw)
        return body if isinstance(body, dict) else {}
    if kind == "multipart/form-data":
        return _parse_multipart(raw, content_type)
    return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))


def _parse_multipart(raw: bytes, content_type: str) -> dict[str, Any]:
    message = BytesParser(policy=HTTP).parsebytes(b"content-type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(data, bytes):
            continue
        filename = part.get_filename()
        if filename is None:
            fields[name] = data.decode("utf-8")
        else:
            fields[name] = {"filename": filename, "content_type": part.get_content_type(), "data": data}
    return fields


def _decoded(params: dict[str, Any]) -> dict[str, Any]:
    """Form values that are JSON objects or arrays, decoded (free text excepted)."""
    return {key: _json_or_string(value) if isinstance(value, str) and key not in TEXT_FIELDS else value
            for key, value in params.items()}


def _json_or_string(value: str) -> Any:
    if not value.lstrip().startswith(("{", "[")):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


# --- updates, as Telegram posts them to the webhook ------------------------------------------------------------


def _user(chat_id: int, first_name: str, last_name: str, username: str) -> dict[str, Any]:
    user: dict[str, Any] = {"id": chat_id, "is_bot": False, "first_name": first_name}
    if last_name:
        user["last_name"] = last_name
    if username:
        user["username"] = username
    return user | {"language_code": "ru"}


def _private_chat(chat_id: int, first_name: str, last_name: str, username: str) -> dict[str, Any]:
    chat = _user(chat_id, first_name, last_name, username)
    del chat["is_bot"], chat["language_code"]
    return chat | {"type": "private"}


def _message_update(update_id: int, chat_id: int, content: dict[str, Any], *, first_name: str = "Анна",
                    last_name: str = "", username: str = "anna", message_id: int | None = None) -> dict[str, Any]:
    """An update with a private message from the chat's user; `message_id` defaults to the update's id."""
    message = {
        "message_id": update_id if message_id is None else message_id,
        "from": _user(chat_id, first_name, last_name, username),
        "chat": _private_chat(chat_id, first_name, last_name, username),
        "date": int(time.time()),
    }
    return {"update_id": update_id, "message": message | content}


def text_update(update_id: int, chat_id: int, text: str, *, first_name: str = "Анна", last_name: str = "",
                username: str = "anna", message_id: int | None = None) -> dict[str, Any]:
    return _message_update(update_id, chat_id, {"text": text}, first_name=first_name, last_name=last_name,
                           username=username, message_id=message_id)


def start_update(update_id: int, chat_id: int, payload: str = "", **sender: Any) -> dict[str, Any]:
    """/start (with a deep-link `payload` when given), marked as a bot command. `sender`: the
    keywords of `text_update` (first_name, last_name, username, message_id)."""
    text = f"/start {payload}" if payload else "/start"
    content = {"text": text, "entities": [{"type": "bot_command", "offset": 0, "length": len("/start")}]}
    return _message_update(update_id, chat_id, content, **sender)


def callback_update(update_id: int, chat_id: int, data: str, *, message_id: int = 1, message_text: str = "Выберите",
                    first_name: str = "Анна", last_name: str = "", username: str = "anna") -> dict[str, Any]:
    """A press on an inline button with callback `data`, under the bot's message `message_id`."""
    query = {
        "id": f"{chat_id}{update_id}",
        "from": _user(chat_id, first_name, last_name, username),
        "message": {"message_id": message_id, "chat": _private_chat(chat_id, first_name, last_name, username),
                    "date": int(time.time()), "text": message_text},
        "chat_instance": str(-abs(chat_id) * 31),
        "data": data,
    }
    return {"update_id": update_id, "callback_query": query}


def _file(kind: str, update_id: int) -> dict[str, str]:
    return {"file_id": f"fake-{kind}-{update_id}", "file_unique_id": f"u-{kind}-{update_id}"}


def photo_update(update_id: int, chat_id: int, *, caption: str | None = None, **sender: Any) -> dict[str, Any]:
    """A photo (two sizes, as Telegram sends them), with an optional caption. `sender`: as in `start_update`."""
    sizes = [_file(f"photo{width}", update_id) | {"width": width, "height": width * 3 // 4, "file_size": width * 40}
             for width in (320, 1280)]
    content: dict[str, Any] = {"photo": sizes}
    if caption is not None:
        content["caption"] = caption
    return _message_update(update_id, chat_id, content, **sender)


def voice_update(update_id: int, chat_id: int, *, duration: int = 3, **sender: Any) -> dict[str, Any]:
    voice = _file("voice", update_id) | {"duration": duration, "mime_type": "audio/ogg", "file_size": duration * 4000}
    return _message_update(update_id, chat_id, {"voice": voice}, **sender)


def sticker_update(update_id: int, chat_id: int, *, emoji: str = "👍", **sender: Any) -> dict[str, Any]:
    sticker = _file("sticker", update_id) | {"type": "regular", "width": 512, "height": 512, "is_animated": False,
                                             "is_video": False, "emoji": emoji}
    return _message_update(update_id, chat_id, {"sticker": sticker}, **sender)


def document_update(update_id: int, chat_id: int, *, file_name: str = "rekvizity.pdf",
                    mime_type: str = "application/pdf", **sender: Any) -> dict[str, Any]:
    document = _file("document", update_id) | {"file_name": file_name, "mime_type": mime_type, "file_size": 52_000}
    return _message_update(update_id, chat_id, {"document": document}, **sender)


def contact_update(update_id: int, chat_id: int, phone_number: str, *, first_name: str = "Анна",
                   user_id: int | None = None, **sender: Any) -> dict[str, Any]:
    """A shared contact. `user_id` defaults to the sender's own (what a request_contact button sends);
    pass another user's id for a contact forwarded from the address book."""
    contact = {"phone_number": phone_number, "first_name": first_name,
               "user_id": chat_id if user_id is None else user_id}
    return _message_update(update_id, chat_id, {"contact": contact}, first_name=first_name, **sender)
